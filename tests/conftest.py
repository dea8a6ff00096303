"""Shared test set-up: the ``--cache-impl`` option runs the conformance catalogue
against an outside cache instead of the registered designs."""

from __future__ import annotations

import os

import pytest

from cache_impl import DESIGNS, LEVELS, Level
from repro.scenarios import CATALOGUE


def pytest_addoption(parser):
    group = parser.getgroup("address-reuse harness")
    group.addoption("--cache-impl", metavar="SPEC", default=None,
                    help="run the conformance catalogue against this cache (name or package.module:attr)")
    group.addoption("--cache-level", type=Level.parse, choices=LEVELS, default=Level.L1,
                    help="with --cache-impl: the level it must reach (default L1)")
    group.addoption("--sweep-seeds", type=int, default=0, metavar="N",
                    help="run the pipeline sweep: every scenario x design x N seeds, one test each "
                         "(spread over workers with -n)")
    group.addoption("--sweep-model", action="append", default=None, metavar="NAME",
                    help="models of the pipeline sweep: toy (default), helios, wan or package.module:factory; "
                         "repeat for several")


def pytest_configure(config):
    # One GPU per xdist worker: SWEEP_GPUS=4 pytest -n 4 ... gives worker gwK the GPU K % 4.
    # Set before anything touches CUDA, so each worker sees only its own device.
    gpus = int(os.environ.get("SWEEP_GPUS", "0") or 0)
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    if gpus > 0 and worker.startswith("gw"):
        os.environ["CUDA_VISIBLE_DEVICES"] = str(int(worker[2:]) % gpus)
    # Share the cores between workers: torch's intra-op threads in every worker
    # oversubscribe the machine, and N workers end up slower than one.
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "0") or 0)
    if workers > 1:
        import torch
        torch.set_num_threads(max(1, (os.cpu_count() or 1) // workers))


def pytest_generate_tests(metafunc):
    if "design" in metafunc.fixturenames:
        outside = metafunc.config.getoption("--cache-impl")
        metafunc.parametrize("design", [outside] if outside else list(DESIGNS))
    if "sweep_case" in metafunc.fixturenames:
        from cache_impl import DESIGNS as designs
        from repro.serving import STRATEGIES
        seeds = range(metafunc.config.getoption("--sweep-seeds"))
        models = metafunc.config.getoption("--sweep-model") or ["toy"]
        cases = [(m, s, d, seed) for m in models for s in STRATEGIES for d in designs for seed in seeds]
        metafunc.parametrize("sweep_case", cases, ids=[f"{m}-{s}-{d}-seed{seed}" for m, s, d, seed in cases])
    if "scenario" in metafunc.fixturenames:
        metafunc.parametrize("scenario", CATALOGUE, ids=[s.name for s in CATALOGUE])


@pytest.fixture
def outside_cache(request):
    """(spec, required level) when --cache-impl was given, else None."""
    spec = request.config.getoption("--cache-impl")
    return (spec, request.config.getoption("--cache-level")) if spec else None
