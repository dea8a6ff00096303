"""pytest plugin (entry point ``pytest11``): run the audit's conformance tests
against your own cache class from your own test suite.

    pytest --pyargs harness.conformance --cache-impl mypkg.caches:MyCache --cache-level L2

or put ``from harness.conformance import *`` in one of your test files. The
verdicts are the audit's: the same scenarios, dtypes, grad mode, contract and
search, judged by the same functions as ``python -m harness audit``.
"""

from __future__ import annotations

import pytest


def pytest_addoption(parser):
    from harness.audit import CATALOGUE_DTYPES, DEFAULT_BUDGET
    from repro.guard import DEFAULT_TIMEOUT, GRAD_MODES
    from repro.scenarios import CONTRACTS

    group = parser.getgroup("address-reuse audit")
    group.addoption("--cache-impl", metavar="SPEC", default=None,
                    help="audit this cache (a registered design or package.module:attr)")
    group.addoption("--cache-level", default="L1", metavar="LEVEL",
                    help="the level it must reach: L0-L3 (default L1)")
    group.addoption("--cache-contract", choices=CONTRACTS, default="lru",
                    help="the hygiene contract it promises (default lru)")
    group.addoption("--cache-grad-mode", choices=list(GRAD_MODES), default="no_grad",
                    help="grad mode around every call into the cache (default no_grad)")
    group.addoption("--cache-budget", type=float, default=DEFAULT_BUDGET, metavar="SECONDS",
                    help=f"seconds of generative search (default {DEFAULT_BUDGET:g}; 0 skips it)")
    group.addoption("--cache-seed", type=int, default=0, help="seed of the search (default 0)")
    group.addoption("--cache-timeout", type=float, default=DEFAULT_TIMEOUT, metavar="SECONDS",
                    help=f"longest a single call into the cache may take (default {DEFAULT_TIMEOUT:g})")
    group.addoption("--cache-dtypes", default=",".join(CATALOGUE_DTYPES),
                    help="dtypes of the catalogue's sources, comma-separated")


def pytest_generate_tests(metafunc):
    if "audited_scenario" in metafunc.fixturenames:
        from repro.scenarios import CATALOGUE
        metafunc.parametrize("audited_scenario", CATALOGUE, ids=[s.name for s in CATALOGUE])


@pytest.fixture(scope="session")
def audited_cache(request):
    """(spec, factory, AuditOptions, unsupported dtypes) for --cache-impl; skips without it."""
    from cache_impl import CacheSpecError, Level, resolve
    from harness.audit import AuditOptions, unsupported_dtypes

    config = request.config
    spec = config.getoption("--cache-impl")
    if not spec:
        pytest.skip("no --cache-impl given: nothing to audit")
    try:
        factory = resolve(spec)
        require = Level.parse(config.getoption("--cache-level"))
    except (CacheSpecError, ValueError) as exc:
        raise pytest.UsageError(str(exc)) from None
    options = AuditOptions(require=require, contract=config.getoption("--cache-contract"),
                           grad_mode=config.getoption("--cache-grad-mode"), budget=config.getoption("--cache-budget"),
                           seed=config.getoption("--cache-seed"), timeout=config.getoption("--cache-timeout"),
                           dtypes=tuple(config.getoption("--cache-dtypes").split(",")))
    return spec, factory, options, unsupported_dtypes(factory, options)
