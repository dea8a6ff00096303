"""Ctrl-C as a user sends it: the signal itself, to a command running in its own process
(tests/test_bad_input.py interrupts every command in-process, at chosen points)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from test_bad_input import SMALL, _no_temporary_files
from ctrl_c import answers_ctrl_c


@pytest.mark.cpu
@pytest.mark.diffusion
def test_a_real_ctrl_c_is_one_line_and_exit_130(tmp_path):
    """The signal itself, sent to a running ``python -m harness repro`` once it reports its first case."""
    out_dir = tmp_path / "run"
    # every design: five cases, so the signal lands with four (and the report) still to go
    proc = subprocess.Popen([sys.executable, "-m", "harness", "repro", "--model", "toy", *SMALL, "--out", str(out_dir)],
                            stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": os.getcwd()},
                            preexec_fn=answers_ctrl_c)
    for line in proc.stdout:
        if line.startswith("[  1/"):
            proc.send_signal(signal.SIGINT)
            break
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err[-2000:]
    assert err.count("\n") == 1 and err.startswith("python -m harness repro: interrupted") and "Traceback" not in err, err
    assert not (out_dir / "report.md").exists() and _no_temporary_files(out_dir)


# Put on PYTHONPATH, Python runs this at start-up: the first ``import torch`` says so on
# stdout and waits there, so the signal lands inside it, whatever the machine's speed.
HOLD_THE_TORCH_IMPORT = '''
import sys
import time


class HoldTorch:
    def find_spec(self, name, path=None, target=None):
        if name == "torch":
            sys.meta_path.remove(self)
            print("importing torch", flush=True)
            time.sleep(120)
        return None


sys.meta_path.insert(0, HoldTorch())
'''

ENTRY_POINTS = {"python -m harness": ["-m", "harness", "audit", "hardened"],
                "address-reuse": [str(Path(sys.executable).with_name("address-reuse")), "audit", "hardened"]}


@pytest.mark.cpu
@pytest.mark.core_model
@pytest.mark.parametrize("prog", list(ENTRY_POINTS))
def test_ctrl_c_during_the_first_import_of_torch_is_one_line_and_exit_130(tmp_path, prog):
    """Before any command starts: each entry point's imports, inside ``import torch``."""
    args = ENTRY_POINTS[prog]
    if prog == "address-reuse" and not Path(args[0]).is_file():
        pytest.skip(f"{args[0]} is not installed (pip install -e . makes it)")
    args = [sys.executable, *args]  # a console script run by this interpreter, as its #! line would
    (tmp_path / "sitecustomize.py").write_text(HOLD_THE_TORCH_IMPORT)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), os.getcwd()])}
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=tmp_path,
                            preexec_fn=answers_ctrl_c)
    assert proc.stdout.readline() == "importing torch\n"
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err[-2000:]
    assert err == f"{prog} audit: interrupted\n", err[-2000:]
    assert not (tmp_path / "reports").exists()  # nothing written


def _children(pid: int) -> list[int]:
    found = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout.split()
    return [int(p) for p in found]


@pytest.mark.cpu
@pytest.mark.diffusion
@pytest.mark.parametrize("to", ["the terminal's process group", "the tool alone"])
def test_ctrl_c_under_make_repro_is_the_tools_one_line_and_make_ends_interrupted(tmp_path, to):
    """``make repro`` and Ctrl-C: the tool's one line, no ``make: ***`` line, and make itself
    ends as interrupted (killed by SIGINT: 130 in the shell), not with its exit 2. The
    environment is the one this test runs in (``-o``: make installs nothing)."""
    root = Path(__file__).resolve().parent.parent
    out_dir = tmp_path / "run"
    stamp = subprocess.run(["make", "-s", "-n", "-p", "repro"], cwd=root, capture_output=True, text=True).stdout
    stamp = next(line.split(":=", 1)[1].strip() for line in stamp.splitlines() if line.startswith("STAMP :="))
    proc = subprocess.Popen(["make", "-o", stamp, "repro", f"ENV_PY={sys.executable}",
                             f"REPRO_ARGS=--model toy {' '.join(SMALL)} --out {out_dir}"],
                            cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, preexec_fn=answers_ctrl_c)
    for line in proc.stdout:
        if line.startswith("[  1/"):
            if to == "the tool alone":  # make -> the recipe's shell -> the tool
                (shell,) = _children(proc.pid)
                (tool,) = _children(shell)
                os.kill(tool, signal.SIGINT)
            else:
                os.killpg(proc.pid, signal.SIGINT)
            break
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == -signal.SIGINT, (proc.returncode, err[-2000:])
    assert err.count("\n") == 1 and err.startswith("python -m harness repro: interrupted"), err
    assert "make: ***" not in out + err
    assert not (out_dir / "report.md").exists() and _no_temporary_files(out_dir)


# A cache whose tenth get() sends the process a SIGINT: the user's Ctrl-C, landing inside a
# call into the cache under audit, exactly where a probe or the catalogue is running.
CTRL_C_INSIDE_GET = '''
import os, signal
from cache_impl.weakref_lru import SourceTensorLRUCache

class Cache(SourceTensorLRUCache):
    calls = 0
    def get(self, source):
        Cache.calls += 1
        if Cache.calls == 10:
            os.kill(os.getpid(), signal.SIGINT)
        return super().get(source)
'''


@pytest.mark.cpu
@pytest.mark.core_model
def test_ctrl_c_inside_a_call_into_the_audited_cache_ends_the_audit_and_is_no_verdict(tmp_path):
    """Not "get() raised KeyboardInterrupt": the guard that turns whatever a cache raises into
    that cache's failure lets the user's Ctrl-C through (a KeyboardInterrupt the cache raises
    by itself stays its failure: tests/test_audit_cli.py)."""
    (tmp_path / "interrupted_cache.py").write_text(CTRL_C_INSIDE_GET)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), os.getcwd()])}
    proc = subprocess.run([sys.executable, "-m", "harness", "audit", "interrupted_cache:Cache", "--budget", "0"],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300,
                          preexec_fn=answers_ctrl_c)
    assert proc.returncode == 130, (proc.returncode, proc.stdout[-1500:], proc.stderr[-1500:])
    assert proc.stderr == "python -m harness audit: interrupted\n", proc.stderr[-2000:]
    assert "FAIL" not in proc.stdout and "raised KeyboardInterrupt" not in proc.stdout, proc.stdout[-1500:]


@pytest.mark.cpu
@pytest.mark.core_model
def test_a_ctrl_c_after_the_command_answered_is_dropped():
    """Once the command has its answer, a Ctrl-C changes nothing: inside the command line's own
    handler it is dropped, and a process that ends with the command ignores SIGINT on the way
    out (Python's default handler there was a traceback, or a silent death by SIGINT)."""
    from harness.cli import run_command
    before = signal.getsignal(signal.SIGINT)
    try:
        def command():
            return 7
        assert run_command("prog", command, program=True) == 7
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
        os.kill(os.getpid(), signal.SIGINT)  # ignored: nothing is raised here
    finally:
        signal.signal(signal.SIGINT, before)
    assert run_command("prog", command) == 7 and signal.getsignal(signal.SIGINT) is before


@pytest.mark.cpu
@pytest.mark.slow
@pytest.mark.parametrize("after", [0.3, 1.0, 2.5])
def test_ctrl_c_during_the_probes_ends_in_one_line_without_an_abort(after):
    """Seen in 9 of 20 Ctrl-Cs sent during the probes: the one line, then the interpreter's
    teardown aborted the process ("terminate called without an active exception", exit 134),
    or an object the interrupt cut short printed a traceback from its ``__del__``."""
    import time
    proc = subprocess.Popen([sys.executable, "-m", "harness", "audit", "hardened", "--budget", "20"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": os.getcwd()}, preexec_fn=answers_ctrl_c)
    for line in proc.stdout:
        if line.startswith("probes, then search"):
            time.sleep(after)  # the probes take seconds: wherever in them it lands, the same end
            proc.send_signal(signal.SIGINT)
            break
    _, err = proc.communicate(timeout=300)
    assert (proc.returncode, err) == (130, "python -m harness audit: interrupted\n"), (proc.returncode, err[-2000:])
