"""The pytest plugin (entry point ``pytest11``), run as a user's suite would run it:
pytest from a folder outside the repo, on the installed project's conformance tests."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytestmark = [pytest.mark.cpu]  # pytest in subprocesses: slow


def _plugin_run(tmp_path, spec: str, level: str, *extra, autoload: bool = True):
    """pytest, from a folder outside the repo, on the installed plugin's tests."""
    env = {**os.environ, "PYTHONPATH": os.getcwd()}
    args = [sys.executable, "-m", "pytest", "-q", "-p", "no:xdist", "-p", "no:randomly", "-p", "no:cacheprovider",
            "--pyargs", "harness.audit.conformance", "--cache-impl", spec, "--cache-level", level, "--cache-budget", "2",
            *extra]
    if not autoload:  # as a project that does not load plugins by entry point would
        env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
        args[3:3] = ["-p", "harness.pytest_plugin"]
    return subprocess.run(args, capture_output=True, text=True, timeout=300, cwd=tmp_path, env=env)


# The entry point is the slower way in (pytest in pytest, installed): make test-all runs it.
@pytest.mark.parametrize("autoload", [pytest.param(True, id="entry-point", marks=pytest.mark.slow),
                                      pytest.param(False, id="dash-p")])
def test_pytest_plugin_audits_an_outside_cache_from_outside_the_repo(tmp_path, autoload):
    # Loaded by -p, one failing scenario shows the plugin at work; the whole run is the entry point's.
    only = () if autoload else ("-k", "storage_swapped")
    done = _plugin_run(tmp_path, "cache_impl.weakref_lru:SourceTensorLRUCache", "L2", *only, autoload=autoload)
    assert done.returncode == 1, done.stdout[-2000:] + done.stderr[-2000:]
    assert "storage_swapped" in done.stdout and "false hit" in done.stdout
    if autoload:  # the clean run once is enough
        # A cache that meets L2 passes every test: torch_weak_id, whose one finding, a wrong miss
        # on new view objects, costs reuse only, in the plugin as in the audit (exit 0 there at L2).
        clean = _plugin_run(tmp_path, "cache_impl.torch_weak_id:WeakIdCache", "L2", "--cache-dtypes", "float32")
        assert clean.returncode == 0, clean.stdout[-3000:]
        assert " passed" in clean.stdout and "failed" not in clean.stdout


def test_pytest_plugin_reports_a_spec_that_does_not_import_once(tmp_path):
    """A usage error (pytest's exit 4), said once, before any test runs."""
    done = _plugin_run(tmp_path, "no_such_package.caches:MyCache", "L2")
    out = done.stdout + done.stderr
    assert done.returncode == pytest.ExitCode.USAGE_ERROR, out[-2000:]
    assert out.count("cannot import") == 1 and "no_such_package" in out, out[-2000:]
    assert len(out.strip().splitlines()) == 1, out[-2000:]
