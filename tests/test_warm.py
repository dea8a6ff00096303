"""Warm processes (``repro.warm``): each job starts as a fresh process that has imported the
pipeline would, a failing or hanging job is one line, and stopping leaves nothing running."""

from __future__ import annotations

import json
import os
import textwrap
import time
from pathlib import Path

import pytest

from repro import warm

pytestmark = [pytest.mark.cpu]

JOBS = '''
import os
import sys
import time
from pathlib import Path

import torch

CALLS = []  # module state: a job that finds an earlier job's entry here did not start fresh


def pipeline(prompt, seed):
    return torch.zeros(2)


def count(args):
    CALLS.append(1)
    Path(args[0]).write_text(str(len(CALLS)))
    print("a pipeline that prints", flush=True)  # must not be read as an answer
    return 0


def fails(args):
    raise ValueError("no GPU here")


def exits(args):
    sys.exit(3)


def hangs(args):
    Path(args[0]).write_text(str(os.getpid()))
    time.sleep(600)
'''


def _children() -> list[str]:
    pid = os.getpid()
    return Path(f"/proc/{pid}/task/{pid}/children").read_text().split()


def _start(folder: Path, pipeline: str = "theirjobs:pipeline") -> warm.WarmProcess:
    (folder / "theirjobs.py").write_text(textwrap.dedent(JOBS))
    (folder / "pipeline.json").write_text(json.dumps({"call": pipeline, "model": None}))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(folder), os.getcwd()])}
    return warm.WarmProcess("w", folder / "pipeline.json", env, folder / "w.log")


@pytest.fixture(scope="module")
def shared(tmp_path_factory):
    """One process for the tests whose jobs end on their own: a job that fails leaves it
    serving the next."""
    p = _start(tmp_path_factory.mktemp("warm"))
    yield p
    p.stop()


@pytest.fixture
def process(tmp_path):
    p = _start(tmp_path)
    yield p
    p.stop()


def test_every_job_starts_fresh_and_answers_in_order(shared, tmp_path):
    done = []
    for i in range(3):
        shared.submit(f"job {i}", "theirjobs:count", [tmp_path / f"count-{i}"])
    warm.wait_for([shared], 60, lambda p, label: done.append(label))
    assert done == ["job 0", "job 1", "job 2"]
    # Each job saw the module as imported, none of the earlier jobs' state.
    assert [(tmp_path / f"count-{i}").read_text() for i in range(3)] == ["1", "1", "1"]


@pytest.mark.parametrize("function, says", [("theirjobs:fails", "job failed (exit 1): ValueError: no GPU here"),
                                            ("theirjobs:exits", "job failed (exit 3)"),
                                            ("theirjobs:missing", "has no callable 'missing'")])
def test_a_failing_job_is_one_line(shared, function, says):
    shared.submit("job", function, [])
    with pytest.raises(warm.JobFailed) as failed:
        warm.wait_for([shared], 60)
    assert says in str(failed.value) and "\n" not in str(failed.value)


def _running(pid: int) -> bool:
    try:  # a zombie (ended, not yet reaped) is not running
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.skipif(not Path(f"/proc/{os.getpid()}/task").is_dir(), reason="needs /proc to list processes")
def test_a_hanging_job_runs_out_of_time_and_stop_leaves_nothing_running(process, tmp_path):
    process.submit("the hanging job", "theirjobs:hangs", [tmp_path / "pid"])
    # Wait for the job's own sign of life (its pid file), never a fixed time: on a busy machine
    # a fork can take seconds. Once it runs, it hangs for good, so any timeout runs out.
    deadline = time.monotonic() + 120
    while not (tmp_path / "pid").is_file() or not (tmp_path / "pid").read_text():
        assert time.monotonic() < deadline, "the hanging job never started (no pid file in 120 s)"
        time.sleep(0.05)
    with pytest.raises(warm.JobFailed, match="the hanging job did not finish in 1s"):
        warm.wait_for([process], 1)
    job = int((tmp_path / "pid").read_text())
    assert _running(job) and str(process.proc.pid) in _children()
    process.stop()
    assert str(process.proc.pid) not in _children()
    # The job got SIGKILL with its process group; it ends a moment later, not yet reaped by us.
    deadline = time.monotonic() + 120
    while _running(job) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _running(job)


def test_a_pipeline_that_starts_threads_on_import_gets_a_fresh_interpreter_per_job(tmp_path):
    # A fork has only the thread that forked: the pipeline's own threads would be missing.
    (tmp_path / "theirthreads.py").write_text(textwrap.dedent("""
        import threading
        import time
        from theirjobs import count, pipeline  # noqa: F401
        threading.Thread(target=time.sleep, args=(600,), daemon=True).start()
    """))
    process = _start(tmp_path, pipeline="theirthreads:pipeline")
    try:
        for i in range(2):
            process.submit(f"job {i}", "theirthreads:count", [tmp_path / f"count-{i}"])
        warm.wait_for([process], 60)
    finally:
        process.stop()
    assert [(tmp_path / f"count-{i}").read_text() for i in range(2)] == ["1", "1"]
    assert "each job in a fresh interpreter: importing the pipeline started threads" in (tmp_path / "w.log").read_text()


def test_a_pipeline_that_cannot_import_ends_its_process_in_one_line(tmp_path):
    process = _start(tmp_path, pipeline="nowhere_at_all:fn")
    try:
        process.submit("the first job", "theirjobs:count", [tmp_path / "x"])
        with pytest.raises(warm.JobFailed, match="the first job failed: its process ended .*nowhere_at_all"):
            warm.wait_for([process], 60)
    finally:
        process.stop()


def test_a_process_that_initialised_cuda_is_not_forked(monkeypatch):
    # Where there is no GPU to initialise, the answer to "was CUDA initialised?" stands in.
    import torch
    assert warm.why_not_fork() is None or "threads" in warm.why_not_fork()
    monkeypatch.setattr(torch.cuda, "is_initialized", lambda: True)
    assert "initialised CUDA" in warm.why_not_fork()
