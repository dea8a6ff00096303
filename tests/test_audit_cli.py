"""The audit's command line on whole audits (catalogue and search, in subprocesses or
in-process): exit codes and verdicts, and user code that misbehaves in every way we
could think of, which must end in one line or a failing verdict, never a pass. Slower
than the core checks: ``cpu`` only."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

pytestmark = [pytest.mark.cpu]


def _audit(capsys, *args):
    """Run the audit command line in-process; (exit code, stdout, stderr)."""
    from harness.__main__ import main
    try:
        code = main(["audit", *args])
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("spec, require, code, level", [
    ("fingerprint", "L1", 1, "L0"),
    ("weakref", "L1", 0, "L1"),
    ("weakref", "L2", 1, "L1"),
    ("hardened", "L2", 0, "L2"),
    ("request_scoped", "L3", 0, "L3"),
])
def test_audit_cli_levels_and_exit_codes(capsys, spec, require, code, level):
    # The catalogue alone (--budget 0): every probe row of the seed fix takes a minute (its put() is linear).
    got, out, err = _audit(capsys, spec, "--require", require, "--budget", "0")
    assert got == code, out + err
    assert f"level reached: {level}" in out and "probes and search: not run (--budget 0)" in out
    if code:
        assert "FAIL" in out and ("storage_swapped" in out or "freed_address_reused" in out)


DTYPE_BLIND_CACHE = '''
from cache_impl.keys import check_keyable
from tests.stand_ins.caches import PreFixFingerprintLRU


def dtype_blind_key(t):
    """Address, layout and version, but of the dtype only its size and whether it
    is floating: float16 and bfloat16 views of one memory collide."""
    check_keyable(t)  # refuses tensors whose address does not locate their data
    version = None if t.is_inference() else t._version
    kind = (t.dtype.itemsize, t.dtype.is_floating_point)
    return (t.data_ptr(), tuple(t.shape), t.stride(), kind, version, t.is_conj(), t.is_neg())


class DtypeBlindCache(PreFixFingerprintLRU):
    key = staticmethod(dtype_blind_key)
'''


def test_audit_search_finds_what_the_catalogue_misses(capsys, monkeypatch, tmp_path):
    """A user's cache that passes every L0 scenario of the catalogue: the probes (or the
    search) find its dtype confusion, names the level and prints a snippet that reproduces it,
    run here in a fresh Python (the audit itself runs in this process)."""
    (tmp_path / "blind.py").write_text(DTYPE_BLIND_CACHE)
    monkeypatch.syspath_prepend(str(tmp_path))
    code, out, err = _audit(capsys, "blind:DtypeBlindCache", "--require", "L0", "--budget", "60")
    assert code == 1, out[-3000:] + err[-2000:]
    assert "catalogue: level L0" in out
    assert re.search("(probes|search) FAILED at L0", out) and "level reached: none" in out
    snippet = out.split("reproduce with:\n\n")[1].split("\nlevel reached")[0]
    assert "from blind import DtypeBlindCache" in snippet
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), os.getcwd()])}
    rerun = subprocess.run([sys.executable, "-c", snippet], capture_output=True, text=True, timeout=120, env=env)
    assert rerun.returncode == 1 and "AssertionError: false hit" in rerun.stderr, rerun.stderr[-2000:]


REFUSING_CACHE = '''
import torch
from cache_impl.hardened import HardenedCache


def _refuse(source):
    if source.is_nested or source.layout is not torch.strided:
        raise RuntimeError("nested and sparse sources are not supported")


class RefusingHardened(HardenedCache):
    """The L2 reference, refusing nested and sparse sources with a RuntimeError, as
    an id-guarded cache from public code does."""

    def get(self, source):
        _refuse(source)
        return super().get(source)

    def put(self, source, value):
        _refuse(source)
        super().put(source, value)


class CrashesOnOddSizes(HardenedCache):
    """Raises on a plain strided tensor a pipeline would pass: that is broken, not a refusal."""

    def get(self, source):
        if source.numel() % 2:
            raise RuntimeError("odd sizes are not supported")
        return super().get(source)
'''


@pytest.mark.core_model
def test_refusing_unsupported_tensors_is_safe_and_reaches_l2(capsys, monkeypatch, tmp_path):
    """A RuntimeError on nested and sparse sources is a refusal, listed in the
    robustness table: the reference still reaches L2, after every probe row.
    The probes run whole, far longer than a budget of 10 ms (4 s of them here, --contract
    none): the budget bounds the search only, so what the probes cover, and the verdict, is
    the same on a busy machine as on a quiet one. Before, the budget cut them short."""
    from harness.audit.probes import situations
    (tmp_path / "refusing.py").write_text(REFUSING_CACHE)
    monkeypatch.syspath_prepend(str(tmp_path))
    code, out, err = _audit(capsys, "refusing:RefusingHardened", "--require", "L2", "--contract", "none",
                            "--budget", "0.01")
    assert code == 0, out + err
    assert "level reached: L2" in out and "FAILED" not in out
    assert f"probes: all {len(list(situations()))} rows in " in out, out
    assert "drawn rows, search: not run (no --budget left after the probes)" in out, out
    robustness = out.split("robustness (dataless_sources)")[1]
    for kind in ("jagged nested tensor", "strided nested tensor", "sparse COO tensor", "sparse CSR tensor"):
        assert f"{kind:35} refused (get() raised RuntimeError: nested and sparse" in robustness


def test_an_exception_on_a_plain_tensor_stays_broken(capsys, monkeypatch, tmp_path):
    """Found after the catalogue (by the probes or the search): seconds, so not core_model."""
    (tmp_path / "refusing.py").write_text(REFUSING_CACHE)
    monkeypatch.syspath_prepend(str(tmp_path))
    code, out, err = _audit(capsys, "refusing:CrashesOnOddSizes", "--require", "L0", "--budget", "20")
    assert code == 1, out + err
    assert "raised RuntimeError: odd sizes are not supported" in out and "level reached: none" in out


# --- user code inside the audit: whatever it does, one line, and never a pass ---

USER_MODULES = {
    "syntax_error": "def broken(:\n",
    "raises_on_import": "raise RuntimeError('boom at import')\n",
    "getattr_raises": "def __getattr__(name):\n    raise ValueError('no ' + name)\n",
    "misbehaving": '''
import os
import sys
import time


class _Dict:
    def __init__(self, max_size=2):
        self.entries = {}

    def put(self, source, value):
        self.entries[source.data_ptr()] = value

    def clear(self):
        self.entries.clear()

    def __len__(self):
        return len(self.entries)


class ExitInInit(_Dict):
    def __init__(self, max_size=2):
        sys.exit(0)


class InterruptInInit(_Dict):
    def __init__(self, max_size=2):
        raise KeyboardInterrupt


class HangInInit(_Dict):
    def __init__(self, max_size=2):
        time.sleep(600)


from cache_impl.hardened import HardenedCache


class SlowInAnotherThread(HardenedCache):
    """Correct (the hardened design), and answers at once in the main thread; elsewhere each
    get() takes 3 s, as on a machine far too busy for the limit."""
    def get(self, source):
        import threading
        if threading.current_thread() is not threading.main_thread():
            time.sleep(3)
        return super().get(source)


class ExitInGet(_Dict):
    def get(self, source):
        sys.exit(0)


class OsExitInInit(_Dict):
    def __init__(self, max_size=2):
        os._exit(0)


class OsExitInGet(_Dict):
    def get(self, source):
        os._exit(0)


class InterruptInGet(_Dict):
    def get(self, source):
        raise KeyboardInterrupt


class HangInGet(_Dict):
    def get(self, source):
        while True:
            pass
''',
}
AUDIT_SPECS = [  # (spec, exit code, what the one line, or the verdict, says)
    ("syntax_error:Cache", 2, "SyntaxError"),
    ("raises_on_import:Cache", 2, "RuntimeError: boom at import"),
    ("getattr_raises:Cache", 2, "ValueError: no Cache"),
    (".relative:Cache", 2, "relative module"),
    ("misbehaving:ExitInInit", 2, "called sys.exit(0)"),
    ("misbehaving:InterruptInInit", 2, "KeyboardInterrupt"),
    ("misbehaving:HangInInit", 2, "did not finish within 0.2 s"),
    ("misbehaving:ExitInGet", 1, "get() called sys.exit(0)"),
    ("misbehaving:OsExitInInit", 2, "called os._exit(0)"),  # exit 0 with no line, were it let through
    ("misbehaving:OsExitInGet", 1, "get() called os._exit(0)"),
    ("misbehaving:InterruptInGet", 1, "get() raised KeyboardInterrupt"),
    ("misbehaving:HangInGet", 3, "get() did not return within 0.2 s"),  # no verdict: it may be the machine
]


@pytest.mark.parametrize("spec, code, message", AUDIT_SPECS, ids=[s for s, _, _ in AUDIT_SPECS])
def test_audit_user_code_cannot_crash_or_pass(capsys, monkeypatch, tmp_path, spec, code, message):
    for name, text in USER_MODULES.items():
        (tmp_path / f"{name}.py").write_text(text)
        monkeypatch.delitem(sys.modules, name, raising=False)
    monkeypatch.syspath_prepend(str(tmp_path))
    got, out, err = _audit(capsys, spec, "--require", "L0", "--budget", "0", "--call-timeout", "0.2")
    assert got == code, out[-2000:] + err[-2000:]
    assert "Traceback" not in err
    if code == 2:
        assert out == "" and err.count("\n") == 1 and message in err, err
    elif code == 3:
        decided = next(line for line in out.splitlines() if line.startswith("level reached: "))
        assert decided.startswith("level reached: not decided (") and message in decided, out
        assert "NOT DECIDED: " in out, out
    else:
        assert message in out and "level reached: none" in out


def test_a_step_in_another_thread_that_is_too_slow_is_no_verdict(capsys, monkeypatch, tmp_path):
    """Before, the probes' thread rows waited 60 s and then failed the cache at L0: under load,
    a correct cache got "level none". Now the limit follows --call-timeout, and what it stops
    decides nothing (exit 3)."""
    (tmp_path / "misbehaving.py").write_text(USER_MODULES["misbehaving"])
    monkeypatch.delitem(sys.modules, "misbehaving", raising=False)
    monkeypatch.syspath_prepend(str(tmp_path))
    got, out, err = _audit(capsys, "misbehaving:SlowInAnotherThread", "--require", "L0", "--budget", "1",
                           "--contract", "none", "--call-timeout", "0.2")
    assert got == 3, out[-3000:] + err[-2000:]
    assert "level reached: not decided (the cache did not return within 1.2 s in another thread)" in out, out
    assert "FAIL" not in out and "NOT DECIDED: misbehaving:SlowInAnotherThread" in out, out


@pytest.mark.parametrize("args", [["no.such.module:Cache"], ["nope"], ["hardened", "--require", "L7"], [],
                                  ["hardened", "--budget", "-1"], ["hardened", "--budget", "soon"],
                                  ["hardened", "--seed", "-3"], ["hardened", "--seed", str(2 ** 64)]])
def test_audit_cli_bad_usage_is_one_line_exit_2(capsys, args):
    code, out, err = _audit(capsys, *args)
    assert code == 2 and out == "" and err.count("\n") == 1 and err.startswith("python -m harness")


@pytest.mark.parametrize("argv, code", [(["audit", "fingerprint", "--budget", "0"], 1),
                                        (["scan", "cache_impl"], 1)], ids=["audit", "scan"])
def test_a_reader_that_stops_early_ends_quietly_with_the_verdict(argv, code):
    """``address-reuse audit ... | head -n 1``: the reader leaves after one line; the command
    runs on to its own exit code, with no BrokenPipeError on stderr."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    proc = subprocess.Popen([sys.executable, "-m", "harness", *argv], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, cwd=root)
    assert proc.stdout.readline()  # as `| head -n 1` does: one line, then the pipe is closed
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=600) == code, err
    assert "Traceback" not in err and "BrokenPipe" not in err, err


@pytest.mark.parametrize("returned, shown", [('"hello"', "'hello' (type str)"), ("7", "7 (type int)")])
def test_a_get_that_returns_what_no_put_gave_is_named_broken(capsys, tmp_path, monkeypatch, returned, shown):
    """Not "another source's value returned": the audit says what get() returned instead."""
    module = f"oddcache_{type(eval(returned)).__name__}"  # a module per case: one process imports both
    (tmp_path / f"{module}.py").write_text(
        "class OddCache:\n"
        "    def __init__(self, max_size=8): self.d = {}\n"
        f"    def get(self, t): return {returned} if self.d else None\n"
        "    def put(self, t, v): self.d[1] = v\n"
        "    def clear(self): self.d.clear()\n"
        "    def __len__(self): return len(self.d)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    code, out, err = _audit(capsys, f"{module}:OddCache", "--budget", "0")
    assert code == 1, err
    assert f"get() returned {shown}: it must return None or a value put() was given (Tensor)" in out, out
    assert "another source's value returned" not in out, out
