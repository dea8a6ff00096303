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
