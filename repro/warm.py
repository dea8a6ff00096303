"""Warm processes: a process imports what a pipeline needs, once, then runs each job in a
fork of itself. Every job starts as a process that has just imported the pipeline would:
nothing built, called or allocated by the pipeline yet, and its work stays in the fork.
Under the never-reuse allocator importing torch and a diffusers model takes seconds per
process, and one differential check runs up to a dozen jobs (the stream, each request
alone, the traced re-runs): three warm processes pay the imports three times.

The process, ``python -m repro.warm JOB.json``: :func:`repro.stream.prepare` imports what
JOB.json's pipeline needs. Then one job a line on stdin, ``["package.module:function",
[args]]``: the function is called as ``function(args)`` in a fresh fork and its return value,
the job's exit status, is written to stdout, one line per job, in order. What the pipeline
prints goes nowhere; stderr is shared by the jobs, in order. EOF on stdin ends the process.

A fork is not a fresh process when importing the pipeline initialised CUDA (a forked child
cannot use it) or started threads (a fork has only the thread that forked): then each job
runs in a fresh interpreter instead, ``python -m repro.warm --job FUNCTION ARGS...``, and
pays the imports again, as it would without a warm process.

The parent's side is :class:`WarmProcess`, and :func:`wait_for` for the jobs of several.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import threading
import time
import traceback
from pathlib import Path


class JobFailed(RuntimeError):
    """A job failed, or its process died or ran out of time (the message is one line)."""


# --- the warm process --------------------------------------------------------------

def _run_job(function: str, args: list) -> int:
    """In the fork: call ``function(args)``; its exit status."""
    from repro.spec import load_callable
    try:
        fn = load_callable(function, RuntimeError, function, f"{function}: expected package.module:function")
        code = fn(args)
        return code if isinstance(code, int) else 0
    except SystemExit as exc:  # as the interpreter would: a message goes to stderr, exit 1
        if exc.code is None or isinstance(exc.code, int):
            return exc.code or 0
        print(exc.code, file=sys.stderr)
        return 1
    except BaseException:  # noqa: BLE001 - the parent reads the last line of stderr
        traceback.print_exc()
        return 1


def why_not_fork() -> str | None:
    """Why a fork of this process would not start as a fresh process does, if so."""
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_initialized():
        return "importing the pipeline initialised CUDA, which a forked process cannot use"
    if threading.active_count() > 1:
        return "importing the pipeline started threads, which a forked process does not have"
    return None


def serve_jobs(job_path: str) -> None:
    from repro.stream import prepare

    answers = os.fdopen(os.dup(1), "w", buffering=1)
    nowhere = os.open(os.devnull, os.O_RDWR)
    os.dup2(nowhere, 1)  # the answers have a descriptor of their own; what the pipeline prints goes nowhere
    prepare(json.loads(Path(job_path).read_text()))
    sys.stdout.flush()
    fresh_interpreters = why_not_fork()
    if fresh_interpreters:
        print(f"each job in a fresh interpreter: {fresh_interpreters}", file=sys.stderr, flush=True)
    for line in sys.stdin:
        function, args = json.loads(line)
        if fresh_interpreters:
            done = subprocess.run([sys.executable, "-m", "repro.warm", "--job", function, *args],
                                  stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
            answers.write(f"{done.returncode}\n")
            continue
        pid = os.fork()
        if pid == 0:  # the job: stdin holds the jobs still queued, which are not its to read
            os.dup2(nowhere, 0)
            sys.stdin = open(os.devnull)
            code = _run_job(function, args)
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)  # not the warm process's cleanup
        _, status = os.waitpid(pid, 0)
        answers.write(f"{os.waitstatus_to_exitcode(status)}\n")
    answers.flush()
    os._exit(0)  # nothing of its own to clean up: the interpreter's teardown takes seconds under ASan


# --- the parent's side ----------------------------------------------------------------

class WarmProcess:
    """A warm process started with ``env``; its stderr (and its jobs') goes to ``log``.
    In a session of its own, so that :meth:`stop` stops the job it is running too."""

    def __init__(self, name: str, job_path: Path, env: dict, log: Path):
        self.name, self.log = name, log
        with open(log, "wb") as err:
            self.proc = subprocess.Popen([sys.executable, "-m", "repro.warm", str(job_path)], env=env,
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err,
                                         start_new_session=True)
        self.pending: list[str] = []  # labels of the jobs sent and not answered yet, in order
        self._buffer = b""

    def submit(self, label: str, function: str, args: list) -> None:
        self.pending.append(label)
        try:
            self.proc.stdin.write((json.dumps([function, [str(a) for a in args]]) + "\n").encode())
            self.proc.stdin.flush()
        except BrokenPipeError:  # it has ended: wait_for says so, with the last line it wrote
            pass

    def read_answers(self) -> list[int] | None:
        """The exit statuses readable now; None when the process has closed its stdout."""
        chunk = os.read(self.proc.stdout.fileno(), 4096)
        if not chunk:
            return None
        self._buffer += chunk
        *lines, self._buffer = self._buffer.split(b"\n")
        return [int(line) for line in lines]

    def last_error(self) -> str:
        try:
            lines = [line.strip() for line in self.log.read_text(errors="replace").splitlines() if line.strip()]
        except OSError:
            lines = []
        return lines[-1] if lines else "no message"

    def stop(self) -> None:
        """End the process: at once if a job is still running, else when it reads EOF."""
        if self.proc.poll() is None and self.pending:
            os.killpg(self.proc.pid, signal.SIGKILL)
        try:
            self.proc.stdin.close()
        except OSError:  # it is gone already
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        self.proc.stdout.close()


def wait_for(processes, timeout: float, on_done=lambda process, label: None) -> None:
    """Wait until every job sent to ``processes`` is answered, calling ``on_done`` for each
    as it ends. Raises :class:`JobFailed` at the first job that fails, or when a process dies
    or the jobs are still running after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        waiting = {p.proc.stdout.fileno(): p for p in processes if p.pending}
        if not waiting:
            return
        left = deadline - time.monotonic()
        ready = select.select(list(waiting), [], [], max(0.0, left))[0]
        if not ready:
            label = next(iter(waiting.values())).pending[0]
            raise JobFailed(f"{label} did not finish in {timeout:.0f}s (a request hangs?); "
                            f"raise --call-timeout if it is only slow")
        for fd in ready:
            process = waiting[fd]
            codes = process.read_answers()
            if codes is None:
                raise JobFailed(f"{process.pending[0]} failed: its process ended ({process.last_error()})")
            for code in codes:
                label = process.pending.pop(0)
                if code != 0:
                    raise JobFailed(f"{label} failed (exit {code}): {process.last_error()}")
                on_done(process, label)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--job"]:
        sys.exit(_run_job(sys.argv[2], sys.argv[3:]))
    serve_jobs(*sys.argv[1:])
