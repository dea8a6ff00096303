"""Shared test set-up: the registered designs and the catalogue as parameters, and
the pipeline sweep. Auditing an outside cache from pytest (``--cache-impl``) is the
installed plugin's (``harness.pytest_plugin``), usable from any test suite."""

from __future__ import annotations

import os

import pytest

# A user's own scripts and tests, run under the sanitizer by tests/test_sanitize.py, not here.
collect_ignore = ["sanitize_cases"]


def pytest_addoption(parser):
    group = parser.getgroup("address-reuse harness")
    group.addoption("--sweep-seeds", type=int, default=0, metavar="N",
                    help="run the pipeline sweep: every scenario x design x N seeds, one test each "
                         "(spread over workers with -n)")
    group.addoption("--sweep-model", action="append", default=None, metavar="NAME",
                    help="models of the pipeline sweep: toy (default), a real model (helios, wan, ...) or package.module:factory; "
                         "repeat for several")
    group.addoption("--hunt", action="store_true",
                    help="run every cell of the diffusers hunt, one test per hook configuration (minutes each); "
                         "without it only the text K/V cache's cell runs")


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
    # Imported here, not at the top: the xdist controller loads this file too, and never
    # collects a test, so it need not start torch.
    from cache_impl import DESIGNS
    from repro.scenarios import CATALOGUE
    if "design" in metafunc.fixturenames:
        metafunc.parametrize("design", list(DESIGNS))
    if "sweep_case" in metafunc.fixturenames:
        from repro.serving import STRATEGIES
        seeds = range(metafunc.config.getoption("--sweep-seeds"))
        models = metafunc.config.getoption("--sweep-model") or ["toy"]
        cases = [(m, s, d, seed) for m in models for s in STRATEGIES for d in DESIGNS for seed in seeds]
        metafunc.parametrize("sweep_case", cases, ids=[f"{m}-{s}-{d}-seed{seed}" for m, s, d, seed in cases])
    if "hunt_hook" in metafunc.fixturenames:
        # The one cell every run keeps: the hook keyed by an address, the hunt's reason to exist.
        # Named here without importing diffusers (seconds at collection, in every worker); the
        # test skips if the installed diffusers does not ship it.
        hooks = ["TextKVCacheConfig"]
        if metafunc.config.getoption("--hunt"):
            from repro.models import hunt_models
            hooks = hunt_models.hook_names()
        metafunc.parametrize("hunt_hook", hooks)
    if "scenario" in metafunc.fixturenames:
        metafunc.parametrize("scenario", CATALOGUE, ids=[s.name for s in CATALOGUE])


@pytest.fixture
def reports(tmp_path, monkeypatch):
    """A reports/ folder of our own, with a latest pointer from an earlier run."""
    from harness import cli, run
    root = tmp_path / "reports"
    (root / "earlier").mkdir(parents=True)
    (root / "latest").symlink_to("earlier")
    monkeypatch.setattr(cli, "new_run_dir", lambda: run.new_run_dir(root))
    return root
