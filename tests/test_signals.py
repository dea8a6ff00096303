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
