"""pytest plugin (entry point ``pytest11``): run the audit's conformance tests
against your own cache class from your own test suite, and sanitize a test suite
for stale address matches (``--address-sanitize``, docs/sanitize.md).

    pytest --pyargs harness.audit.conformance --cache-impl mypkg.caches:MyCache --cache-level L2

or put ``from harness.audit.conformance import *`` in one of your test files. The
verdicts are the audit's: the same scenarios, dtypes, grad mode, contract and
search, judged by the same functions as ``python -m harness audit``.
"""

from __future__ import annotations

import os

import pytest


def pytest_addoption(parser):
    # Loaded into every pytest run of an environment that has this project: add
    # options only, import nothing heavy (torch) until a test asks for the audit.
    group = parser.getgroup("address-reuse audit")
    group.addoption("--cache-impl", metavar="SPEC", default=None,
                    help="audit this cache (a registered design or package.module:attr)")
    group.addoption("--cache-level", default="L1", metavar="LEVEL",
                    help="the level it must reach: L0-L3 (default L1)")
    group.addoption("--cache-contract", choices=("none", "bounded", "lru"), default="lru",
                    help="the hygiene contract it promises (default lru)")
    group.addoption("--cache-grad-mode", choices=("no_grad", "inference", "enabled"), default="no_grad",
                    help="grad mode around every call into the cache (default no_grad)")
    group.addoption("--cache-budget", type=float, default=None, metavar="SECONDS",
                    help="seconds for the probes (always run whole) and the generative search, which gets "
                         "what is left (default: the audit's; 0 skips both)")
    group.addoption("--cache-seed", type=int, default=0, help="seed of the search (default 0)")
    group.addoption("--cache-timeout", type=float, default=None, metavar="SECONDS",
                    help="longest a single call into the cache may take (default: the audit's)")
    group.addoption("--cache-dtypes", default=None,
                    help="dtypes of the catalogue's sources, comma-separated (default: the audit's)")
    group = parser.getgroup("address-reuse sanitize")
    group.addoption("--address-sanitize", action="store_true", default=False,
                    help="track data_ptr() and id() keys and report stale address matches per test "
                         "(docs/sanitize.md)")
    group.addoption("--address-sanitize-fail", action="store_true", default=False,
                    help="with --address-sanitize: fail a test whose setup or call made a stale match")


def pytest_generate_tests(metafunc):
    if "audited_scenario" in metafunc.fixturenames:
        from repro.scenarios import CATALOGUE
        metafunc.parametrize("audited_scenario", CATALOGUE, ids=[s.name for s in CATALOGUE])


def pytest_configure(config):
    """Check --cache-impl and --cache-level once, before any test: a spec that does not
    import is one pytest usage error, not an error repeated for every audited test.
    Register the sanitizer's hooks when asked, or when the run is already sanitized
    (``address-reuse sanitize -- pytest``: then each finding is named by its test)."""
    if config.getoption("--address-sanitize-fail", default=False) and not config.getoption("--address-sanitize"):
        raise pytest.UsageError("--address-sanitize-fail needs --address-sanitize")
    if config.getoption("--address-sanitize", default=False) or os.environ.get("ADDRESS_REUSE_SANITIZE"):
        from harness.sanitize.plugin import SanitizePlugin
        config.pluginmanager.register(SanitizePlugin(config), "address-reuse-sanitize")
    spec = config.getoption("--cache-impl", default=None)
    if not spec:
        return
    from cache_impl import CacheSpecError, Level, resolve
    try:
        require = Level.parse(config.getoption("--cache-level"))
    except ValueError as exc:
        raise pytest.UsageError(f"--cache-level: {exc}") from None
    try:
        config._address_reuse_audited = resolve(spec), require
    except CacheSpecError as exc:
        raise pytest.UsageError(f"--cache-impl: {exc}") from None


@pytest.fixture(scope="session")
def audited_cache(request):
    """(spec, factory, AuditOptions, unsupported dtypes) for --cache-impl; skips without it."""
    from harness.audit.runner import AuditOptions, unsupported_dtypes

    config = request.config
    spec = config.getoption("--cache-impl")
    if not spec:
        pytest.skip("no --cache-impl given: nothing to audit")
    factory, require = config._address_reuse_audited
    given = {"budget": config.getoption("--cache-budget"), "timeout": config.getoption("--cache-timeout"),
             "dtypes": config.getoption("--cache-dtypes")}
    if given["dtypes"]:
        given["dtypes"] = tuple(given["dtypes"].split(","))
    options = AuditOptions(require=require, contract=config.getoption("--cache-contract"),
                           grad_mode=config.getoption("--cache-grad-mode"), seed=config.getoption("--cache-seed"),
                           **{k: v for k, v in given.items() if v is not None})
    return spec, factory, options, unsupported_dtypes(factory, options)
