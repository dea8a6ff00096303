"""Shared test set-up: the ``--cache-impl`` option runs the conformance catalogue
against an outside cache instead of the registered designs."""

from __future__ import annotations

import pytest

from cache_impl import DESIGNS, LEVELS
from repro.scenarios import CATALOGUE


def pytest_addoption(parser):
    group = parser.getgroup("address-reuse harness")
    group.addoption("--cache-impl", metavar="SPEC", default=None,
                    help="run the conformance catalogue against this cache (name or package.module:attr)")
    group.addoption("--cache-level", choices=LEVELS, default="L1",
                    help="with --cache-impl: the level it must reach (default L1)")


def pytest_generate_tests(metafunc):
    if "design" in metafunc.fixturenames:
        outside = metafunc.config.getoption("--cache-impl")
        metafunc.parametrize("design", [outside] if outside else list(DESIGNS))
    if "scenario" in metafunc.fixturenames:
        metafunc.parametrize("scenario", CATALOGUE, ids=[s.name for s in CATALOGUE])


@pytest.fixture
def outside_cache(request):
    """(spec, required level) when --cache-impl was given, else None."""
    spec = request.config.getoption("--cache-impl")
    return (spec, LEVELS.index(request.config.getoption("--cache-level"))) if spec else None
