"""Ctrl-C as a user sends it: the signal itself, to a command running in its own process
(tests/test_bad_input.py interrupts every command in-process, at chosen points)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from test_bad_input import SMALL, _no_temporary_files


@pytest.mark.cpu
@pytest.mark.diffusion
def test_a_real_ctrl_c_is_one_line_and_exit_130(tmp_path):
    """The signal itself, sent to a running ``python -m repro`` once it reports its first case."""
    out_dir = tmp_path / "run"
    # every design: five cases, so the signal lands with four (and the report) still to go
    proc = subprocess.Popen([sys.executable, "-m", "repro", "--model", "toy", *SMALL, "--out", str(out_dir)],
                            stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": os.getcwd()})
    for line in proc.stdout:
        if line.startswith("[  1/"):
            proc.send_signal(signal.SIGINT)
            break
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err[-2000:]
    assert err.count("\n") == 1 and err.startswith("python -m repro: interrupted") and "Traceback" not in err, err
    assert not (out_dir / "report.md").exists() and _no_temporary_files(out_dir)
