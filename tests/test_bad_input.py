"""Bad input to every command line: a one-line error naming the problem, exit 2,
no traceback, and nothing left behind. The list below is what was tried."""

from __future__ import annotations

import pytest
import torch

pytestmark = [pytest.mark.core_model, pytest.mark.cpu]  # no model runs here

REPRO = [
    (["--cache", "nope"], "unknown cache"),
    (["--cache", "a:b:c"], "malformed"),
    (["--cache", "no_such_pkg.mod:Cache"], "cannot import"),
    (["--cache", "collections:OrderedDict"], "does not make a cache"),
    (["--cache", "cache_impl.keys:check_max_size"], "does not make a cache"),
    (["--cache", "cache_impl.levels:LEVELS"], "not callable"),
    (["--requests", "0"], "must be at least 1"),
    (["--requests", "-3"], "must be at least 1"),
    (["--requests", "many"], "not an integer"),
    (["--steps", "0"], "must be at least 1"),
    (["--preset", "huge"], "invalid choice"),
    (["--device", "tpu"], "invalid choice"),
    (["--scenario", "nope"], "invalid choice"),
    (["--seed", "x"], "invalid int"),
    (["--out", "/proc/no/such/place"], "cannot write there"),
    (["--model", "nope"], "unknown model"),
    (["--model", "no_such_pkg.models:factory"], "cannot import"),
    (["--model", "repro.models:no_factory"], "no callable"),
    (["--model", "helios", "--preset", "helios"], "applies to the toy model only"),
    (["--dtype", "float16"], "invalid choice"),
    (["--threads", "0"], "must be at least 1"),
]
HARNESS = [
    (["audit"], "required"),
    (["audit", "nope"], "unknown cache"),
    (["audit", "x:"], "malformed"),
    (["audit", "hardened", "--require", "L9"], "unknown level 'L9'"),
    (["compare", "--before", "hardened"], "required"),
    (["compare", "--before", "hardened", "--after", "hardened"], "same cache"),
    (["compare", "--before", "nope", "--after", "hardened"], "unknown cache"),
    (["compare", "--before", "weakref", "--after", "hardened", "--require", "L0"], "invalid choice"),
    (["compare", "--before", "weakref", "--after", "hardened", "--model", "nope"], "unknown model"),
    (["frobnicate"], "invalid choice"),
]


def _run(capsys, main, argv):
    try:
        code = main(argv)
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


def _assert_usage_error(code, out, err, message):
    assert code == 2
    assert err.count("\n") == 1 and "Traceback" not in err and message in err, err


@pytest.mark.parametrize("argv, message", REPRO, ids=[" ".join(a) for a, _ in REPRO])
def test_repro_cli_rejects(capsys, tmp_path, argv, message):
    from repro.__main__ import main
    out_dir = tmp_path / "run"
    if "--out" not in argv:
        argv = [*argv, "--out", str(out_dir)]
    _assert_usage_error(*_run(capsys, main, argv), message)
    assert not out_dir.exists()  # nothing left behind


def test_repro_cli_rejects_a_file_as_output_folder(capsys, tmp_path):
    from repro.__main__ import main
    target = tmp_path / "a-file"
    target.write_text("keep me")
    _assert_usage_error(*_run(capsys, main, ["--out", str(target)]), "not a folder")
    assert target.read_text() == "keep me"


@pytest.mark.skipif(torch.cuda.is_available(), reason="a GPU is present, so --device cuda is valid")
def test_repro_cli_rejects_cuda_without_gpu(capsys, tmp_path):
    from repro.__main__ import main
    _assert_usage_error(*_run(capsys, main, ["--device", "cuda", "--out", str(tmp_path / "x")]), "no CUDA")


@pytest.mark.parametrize("argv, message", HARNESS, ids=[" ".join(a) for a, _ in HARNESS])
def test_harness_cli_rejects(capsys, tmp_path, argv, message):
    from harness.__main__ import main
    if argv[0] == "compare":
        argv = [*argv, "--out", str(tmp_path / "run")]
    _assert_usage_error(*_run(capsys, main, argv), message)
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("content, message", [(None, "no results.json"), ("{not json", "not valid JSON"),
                                              ('{"records": []}', "no records")])
def test_report_rejects_bad_results(capsys, tmp_path, content, message):
    from harness.__main__ import main
    if content is not None:
        (tmp_path / "results.json").write_text(content)
    _assert_usage_error(*_run(capsys, main, ["report", str(tmp_path)]), message)
    assert not (tmp_path / "report.md").exists() and not (tmp_path / "report.html").exists()


def test_a_model_factory_that_builds_nothing_is_one_line(capsys, tmp_path):
    from repro.__main__ import main
    code, out, err = _run(capsys, main, ["--model", "collections:OrderedDict", "--out", str(tmp_path / "run")])
    assert code == 2 and err.count("\n") == 1 and "not a VideoModel" in err and "Traceback" not in err, err


# --- user code inside the audit: whatever it does, one line, and never a pass ---

USER_MODULES = {
    "syntax_error": "def broken(:\n",
    "raises_on_import": "raise RuntimeError('boom at import')\n",
    "getattr_raises": "def __getattr__(name):\n    raise ValueError('no ' + name)\n",
    "misbehaving": '''
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


class ExitInGet(_Dict):
    def get(self, source):
        sys.exit(0)


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
    ("misbehaving:InterruptInGet", 1, "get() raised KeyboardInterrupt"),
    ("misbehaving:HangInGet", 1, "get() did not return within 0.2 s"),
]


@pytest.mark.parametrize("spec, code, message", AUDIT_SPECS, ids=[s for s, _, _ in AUDIT_SPECS])
def test_audit_user_code_cannot_crash_or_pass(tmp_path, spec, code, message):
    import os
    import subprocess
    import sys

    for name, text in USER_MODULES.items():
        (tmp_path / f"{name}.py").write_text(text)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), os.getcwd()])}
    done = subprocess.run([sys.executable, "-m", "harness", "audit", spec, "--require", "L0", "--budget", "0",
                           "--call-timeout", "0.2"], capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == code, done.stdout[-2000:] + done.stderr[-2000:]
    assert "Traceback" not in done.stderr
    if code == 2:
        assert done.stdout == "" and done.stderr.count("\n") == 1 and message in done.stderr, done.stderr
    else:
        assert message in done.stdout and "level reached: none" in done.stdout
