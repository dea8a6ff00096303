"""Bad input to every command line, and Ctrl-C: a one-line error naming the problem, no
traceback, nothing left behind. Exit 2 for bad usage; 4 when a run or its report fails midway
(1 and 3 are compare's verdicts). The lists below are what was tried."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import torch

pytestmark = [pytest.mark.core_model, pytest.mark.cpu]  # no model runs here, but for the midway failures

BIG = str(10 ** 12)  # a trillion
REPRO = [
    (["--cache", "nope"], "unknown cache"),
    (["--cache", "a:b:c"], "malformed"),
    (["--cache", "no_such_pkg.mod:Cache"], "cannot import"),
    (["--cache", "collections:OrderedDict"], "does not make a cache"),
    (["--cache", "cache_impl.keys:check_max_size"], "does not make a cache"),
    (["--cache", "cache_impl.levels:LEVELS"], "not callable"),
    (["--requests", "0"], "must be between 1 and 1000, got 0"),
    (["--requests", "-3"], "must be between 1 and 1000, got -3"),
    (["--requests", "many"], "not an integer"),
    (["--requests", BIG], f"must be between 1 and 1000, got {BIG}"),
    (["--steps", "0"], "must be between 1 and 1000, got 0"),
    (["--steps", BIG], f"must be between 1 and 1000, got {BIG}"),
    (["--threads", "0"], "must be between 1 and 1024, got 0"),
    (["--threads", BIG], f"must be between 1 and 1024, got {BIG}"),
    (["--out", ""], "an empty path: name the folder to write into"),
    (["--seed", "x"], "not an integer: 'x'"),
    (["--seed", "-1"], "must be between 0 and 2**32 - 1, got -1"),
    (["--seed", str(2 ** 63)], f"must be between 0 and 2**32 - 1, got {2 ** 63}"),
    (["--seed", str(10 ** 30)], f"must be between 0 and 2**32 - 1, got {10 ** 30}"),
    (["--seed", "0", "0"], "--seed names 0 twice"),
    (["--seed", "0", "1", "0"], "--seed names 0 twice"),
    (["--cache", "weakref", "weakref"], "--cache names weakref twice"),
    (["--cache", "fingerprint", "weakref", "fingerprint"], "--cache names fingerprint twice"),
    (["--scenario", "natural_reuse", "natural_reuse"], "--scenario names natural_reuse twice"),
    (["--model", "toy", "toy"], "--model names toy twice"),
    (["--preset", "huge"], "invalid choice"),
    (["--device", "tpu"], "invalid choice"),
    (["--scenario", "nope"], "invalid choice"),
    (["--out", "/proc/no/such/place"], "cannot write there"),
    (["--model", "nope"], "unknown model"),
    (["--model", "no_such_pkg.models:factory"], "cannot import"),
    (["--model", "repro.models:no_factory"], "no callable"),
    (["--model", "helios", "--preset", "helios"], "applies to the toy model only"),
    (["--dtype", "float16"], "invalid choice"),
]
COMPARE = ["compare", "--before", "weakref", "--after", "hardened"]
HARNESS = [
    (["audit"], "required"),
    (["audit", "nope"], "unknown cache"),
    (["audit", "x:"], "malformed"),
    (["audit", "hardened", "--require", "L9"], "unknown level 'L9'"),
    (["compare", "--before", "hardened"], "required"),
    (["compare", "--before", "hardened", "--after", "hardened"], "same cache"),
    (["compare", "--before", "nope", "--after", "hardened"], "unknown cache"),
    ([*COMPARE, "--require", "L0"], "invalid choice"),
    ([*COMPARE, "--model", "nope"], "unknown model"),
    ([*COMPARE, "--seed", str(2 ** 63)], "must be between 0 and 2**32 - 1"),
    ([*COMPARE, "--seed", "-5"], "must be between 0 and 2**32 - 1"),
    ([*COMPARE, "--steps", BIG], "must be between 1 and 1000"),
    ([*COMPARE, "--requests", BIG], "must be between 1 and 1000"),
    ([*COMPARE, "--threads", BIG], "must be between 1 and 1024"),
    ([*COMPARE, "--seed", "3", "3"], "--seed names 3 twice"),
    ([*COMPARE, "--scenario", "freed_address_reused", "freed_address_reused"],
     "--scenario names freed_address_reused twice"),
    ([*COMPARE, "--model", "toy", "toy"], "--model names toy twice"),
    (["frobnicate"], "invalid choice"),
]

def repro_main(argv=None):
    """``python -m harness repro ARGS`` in this process."""
    from harness.__main__ import main
    return main(["repro", *(argv or [])])



def _run(capsys, main, argv):
    try:
        code = main(argv)
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


def _assert_one_line(code, out, err, message, expected_code=2):
    assert code == expected_code, (code, err)
    assert err.count("\n") == 1 and "Traceback" not in err and message in err, err


# Each command with the least it needs to parse: an option it does not know is still its own error.
COMMANDS_PARSED = {"audit": ["hardened"], "scan": ["."], "repro": [], "differential": ["--model", "toy"],
                   "report": ["x"], "compare": ["--before", "fingerprint", "--after", "hardened"],
                   "hunt": ["diffusers"], "bench": [], "selfcheck": []}


@pytest.mark.parametrize("command", list(COMMANDS_PARSED))
def test_an_option_no_command_knows_is_said_by_that_command(capsys, no_run_folder, command):
    from harness.__main__ import main
    code, out, err = _run(capsys, main, [command, *COMMANDS_PARSED[command], "--nonsense", "x"])
    _assert_one_line(code, out, err, "unrecognized arguments: --nonsense x")
    assert err.startswith(f"python -m harness {command}: error: "), err


@pytest.fixture
def no_run_folder(monkeypatch):
    """Fail the test if a command makes a run folder under reports/ (it must refuse first)."""
    def refuse(*_):
        raise AssertionError("a run folder was made before the input was checked")
    monkeypatch.setattr("harness.cli.new_run_dir", refuse)


@pytest.mark.parametrize("argv, message", REPRO, ids=[" ".join(a) for a, _ in REPRO])
def test_repro_cli_rejects(capsys, tmp_path, no_run_folder, argv, message):
    main = repro_main
    out_dir = tmp_path / "run"
    if "--out" not in argv:
        argv = [*argv, "--out", str(out_dir)]
    _assert_one_line(*_run(capsys, main, argv), message)
    assert not out_dir.exists()  # nothing left behind


@pytest.mark.parametrize("argv, message", [(a, m) for a, m in REPRO if "--out" not in a],
                         ids=[" ".join(a) for a, m in REPRO if "--out" not in a])
def test_repro_cli_rejects_before_making_a_run_folder(capsys, no_run_folder, argv, message):
    main = repro_main
    _assert_one_line(*_run(capsys, main, argv), message)


def test_repro_cli_rejects_a_file_as_output_folder(capsys, tmp_path):
    main = repro_main
    target = tmp_path / "a-file"
    target.write_text("keep me")
    _assert_one_line(*_run(capsys, main, ["--out", str(target)]), "not a folder")
    assert target.read_text() == "keep me"


@pytest.mark.skipif(torch.cuda.is_available(), reason="a GPU is present, so --device cuda is valid")
def test_repro_cli_rejects_cuda_without_gpu(capsys, tmp_path):
    main = repro_main
    _assert_one_line(*_run(capsys, main, ["--device", "cuda", "--out", str(tmp_path / "x")]), "no CUDA")


@pytest.mark.parametrize("argv, message", HARNESS, ids=[" ".join(a) for a, _ in HARNESS])
def test_harness_cli_rejects(capsys, tmp_path, no_run_folder, argv, message):
    from harness.__main__ import main
    if argv[0] == "compare":
        argv = [*argv, "--out", str(tmp_path / "run")]
    _assert_one_line(*_run(capsys, main, argv), message)
    assert not (tmp_path / "run").exists()


def _valid_results() -> dict:
    from synthetic_results import synthetic_results
    return synthetic_results().to_json()


def _with(change):
    data = _valid_results()
    change(data)
    return json.dumps(data)


REPORT_PREFIX = "python -m harness report: error: "
BAD_RESULTS = [
    (None, "no results.json"),
    ("{not json", "is not valid JSON"),
    ("", "is not valid JSON"),
    ("[]", "results: expected an object, got list"),
    ("null", "results: expected an object, got NoneType"),
    ("42", "results: expected an object, got int"),
    ('"text"', "results: expected an object, got str"),
    ('{"records": []}', "results: missing field 'title'"),
    (_with(lambda d: d.update(records=[])), "results hold no records"),
    (_with(lambda d: d.update(records="x")), "field 'records' should be list"),
    (_with(lambda d: d.update(records=[1])), "record 0: expected an object, got int"),
    (_with(lambda d: d["records"][0].pop("verdict")), "record 0: missing field 'verdict'"),
    (_with(lambda d: d["records"][1].pop("ssim_min")), "record 1: missing field 'ssim_min'"),
    (_with(lambda d: d["records"][0].update(seed="0")), "record 0: field 'seed' should be int, got str"),
    (_with(lambda d: d["records"][0].update(address_reused=1)), "field 'address_reused' should be bool"),
    (_with(lambda d: d["records"][0].update(ssim_per_frame=["a"])), "field 'ssim_per_frame' should be"),
    (_with(lambda d: d["records"][0].update(verdict="fine")), "record verdict 'fine'"),
    (_with(lambda d: d["records"][0].update(level="L7")), "record level: unknown level 'L7'"),
    (_with(lambda d: d["caches"]["hardened"].update(declared_level="high")), "declared level: unknown level"),
    (_with(lambda d: next(iter(d["clips"].values())).update(level="")), "clip level: unknown level ''"),
    (_with(lambda d: d["plan"].pop("seeds")), "results do not describe a consistent run: KeyError: 'seeds'"),
    (_with(lambda d: d["environment"].pop("torch")), "results do not describe a consistent run: KeyError"),
    (_with(lambda d: d["records"][0].update(cache="other")), "records name caches the run does not describe"),
    (_with(lambda d: d.update(kind="mystery")), "kind 'mystery'"),
    (_with(lambda d: d.update(pair={"before": "fingerprint"})), "pair must name a before and an after"),
    (_with(lambda d: d.update(caches={"fingerprint": 3})), "cache 'fingerprint': expected an object"),
    (_with(lambda d: d["caches"]["hardened"].pop("declared_level")), "missing field 'declared_level'"),
    (_with(lambda d: next(iter(d["clips"].values())).update(designs=[])), "field 'designs' should be dict, got list"),
    (_with(lambda d: next(iter(d["clips"].values())).update(reference="not base64!")), "does not decode"),
]


@pytest.mark.parametrize("content, message", BAD_RESULTS, ids=[m for _, m in BAD_RESULTS])
def test_report_rejects_bad_results(capsys, tmp_path, content, message):
    from harness.__main__ import main
    if content is not None:
        (tmp_path / "results.json").write_text(content)
    code, out, err = _run(capsys, main, ["report", str(tmp_path)])
    _assert_one_line(code, out, err, message)
    assert err.startswith(REPORT_PREFIX), err
    assert sorted(p.name for p in tmp_path.iterdir()) == (["results.json"] if content is not None else [])


def test_report_rejects_a_file_that_is_not_text(capsys, tmp_path):
    from harness.__main__ import main
    (tmp_path / "results.json").write_bytes(b"\xff\xfe\x00garbage")
    code, out, err = _run(capsys, main, ["report", str(tmp_path)])
    _assert_one_line(code, out, err, "cannot read it")
    assert err.startswith(REPORT_PREFIX)


def test_report_that_cannot_be_written_leaves_nothing(capsys, tmp_path):
    from harness.__main__ import main
    (tmp_path / "results.json").write_text(json.dumps(_valid_results()))
    (tmp_path / "report.html").mkdir()  # in the way
    code, out, err = _run(capsys, main, ["report", str(tmp_path)])
    _assert_one_line(code, out, err, "report.html exists and is not a file", expected_code=4)
    assert err.startswith(REPORT_PREFIX)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.html", "results.json"]


def test_a_model_factory_that_builds_nothing_is_one_line(capsys, tmp_path):
    main = repro_main
    code, out, err = _run(capsys, main, ["--model", "collections:OrderedDict", "--out", str(tmp_path / "run")])
    _assert_one_line(code, out, err, "not a VideoModel")
    assert not (tmp_path / "run").exists() and "results" not in out


def test_a_model_factory_that_raises_is_one_line(capsys, tmp_path, monkeypatch):
    main = repro_main
    (tmp_path / "raising_model.py").write_text("def build(**_):\n    raise RuntimeError('no weights here')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    code, out, err = _run(capsys, main, ["--model", "raising_model:build", "--out", str(tmp_path / "run")])
    _assert_one_line(code, out, err, "model 'raising_model:build': the factory raised RuntimeError: no weights here")
    assert not (tmp_path / "run").exists() and "results.json" not in err


@pytest.mark.parametrize("model", ["helios", "wan"])
def test_a_real_model_without_diffusers_says_what_to_install(capsys, tmp_path, monkeypatch, no_run_folder, model):
    import sys
    main = repro_main
    from repro.models import DIFFUSERS_RANGE
    monkeypatch.setitem(sys.modules, "diffusers", None)  # find_spec answers None: not installed
    code, out, err = _run(capsys, main, ["--model", model, "--out", str(tmp_path / "run")])
    _assert_one_line(code, out, err, f"pip install 'diffusers{DIFFUSERS_RANGE}'")
    assert not (tmp_path / "run").exists()


# --- failures midway: exit 4, no report, reports/latest unchanged ---------------------

CRASHING_CACHE = '''
class CrashingCache:
    """Passes the spec check, then fails at the first lookup."""
    def __init__(self, max_size=2):
        pass
    def get(self, source):
        raise RuntimeError("lookup exploded")
    def put(self, source, value):
        pass
    def clear(self):
        pass
    def __len__(self):
        return 0
'''


SMALL = ["--seed", "0", "--requests", "2", "--steps", "2", "--scenario", "freed_address_reused"]


@pytest.mark.diffusion
def test_a_crashing_after_cache_in_compare_writes_no_report(capsys, tmp_path, monkeypatch, reports):
    from harness.__main__ import main
    (tmp_path / "crashmod.py").write_text(CRASHING_CACHE)
    monkeypatch.syspath_prepend(str(tmp_path))
    code, out, err = _run(capsys, main, ["compare", "--before", "fingerprint", "--after", "crashmod:CrashingCache",
                                         *SMALL])
    _assert_one_line(code, out, err, "python -m harness compare: error: the run failed midway: RuntimeError: "
                                     "lookup exploded", expected_code=4)
    runs = [p for p in reports.iterdir() if p.name not in ("earlier", "latest")]
    assert len(runs) == 1 and not (runs[0] / "report.md").exists() and not (runs[0] / "report.html").exists()
    assert (reports / "latest").readlink().name == "earlier" and not (reports / "latest-compare").exists()


@pytest.mark.diffusion
def test_a_cache_that_calls_sys_exit_is_a_run_failed_midway_not_its_exit_code(capsys, tmp_path, monkeypatch, reports):
    (tmp_path / "exitmod.py").write_text(CRASHING_CACHE.replace('raise RuntimeError("lookup exploded")',
                                                                "raise SystemExit(3)"))
    monkeypatch.syspath_prepend(str(tmp_path))
    code, out, err = _run(capsys, repro_main, ["--model", "toy", "--cache", "exitmod:CrashingCache", *SMALL])
    _assert_one_line(code, out, err, "python -m harness repro: error: the run failed midway: sys.exit(3) was called",
                     expected_code=4)
    assert sorted(p.name for p in reports.iterdir()) == ["earlier", "latest"]  # no empty run folder left


@pytest.mark.diffusion
@pytest.mark.parametrize("module, does, says", [
    ("leavesmod", "os._exit(0)", "os._exit(0) was called"),  # unguarded: exit 0 and no line
    ("hangsmod", "while True: pass", "cache hangsmod:CrashingCache: get() did not return within 0.5 s "
                                     "(raise --call-timeout if it is only slow)")], ids=["os_exit", "hangs"])
def test_a_cache_that_leaves_at_once_or_hangs_is_a_run_failed_midway(capsys, tmp_path, monkeypatch, reports, module,
                                                                     does, says):
    (tmp_path / f"{module}.py").write_text("import os\n" + CRASHING_CACHE.replace(
        'raise RuntimeError("lookup exploded")', does))
    monkeypatch.syspath_prepend(str(tmp_path))
    code, out, err = _run(capsys, repro_main, ["--model", "toy", "--cache", f"{module}:CrashingCache", *SMALL,
                                               "--call-timeout", "0.5"])
    _assert_one_line(code, out, err, f"python -m harness repro: error: the run failed midway: {says}", expected_code=4)
    assert sorted(p.name for p in reports.iterdir()) == ["earlier", "latest"]  # no empty run folder left


@pytest.mark.diffusion
def test_an_unwritable_report_in_a_run_is_exit_4(capsys, tmp_path, reports):
    main = repro_main
    out_dir = tmp_path / "run"
    (out_dir / "report.html").mkdir(parents=True)
    code, out, err = _run(capsys, main, ["--model", "toy", "--cache", "fingerprint", "weakref", *SMALL,
                                         "--out", str(out_dir)])
    _assert_one_line(code, out, err, "python -m harness repro: error: cannot write the report", expected_code=4)
    assert not (out_dir / "report.md").exists() and (out_dir / "results.json").is_file()
    assert (reports / "latest").readlink().name == "earlier"


@pytest.mark.diffusion
def test_compare_keeps_its_own_latest_pointer(capsys, reports):
    from harness.__main__ import main
    code, out, err = _run(capsys, main, ["compare", "--before", "fingerprint", "--after", "weakref", *SMALL])
    assert code == 0, err
    assert (reports / "latest").readlink().name == "earlier"  # the last make repro stays latest
    assert ((reports / "latest-compare") / "report.html").is_file()


def test_two_runs_in_the_same_second_get_two_folders(tmp_path):
    from harness.run import new_run_dir
    first, second = new_run_dir(tmp_path), new_run_dir(tmp_path)
    assert first != second and first.is_dir() and second.is_dir()


# --- Ctrl-C: one line, exit 130, nothing half-written, latest pointers unchanged ---------

def _interrupt_at(monkeypatch, target: str, calls_before: int = 0):
    """Make ``target`` raise KeyboardInterrupt (as Ctrl-C there would) after ``calls_before`` calls."""
    import importlib
    module_name, attr = target.rsplit(".", 1)
    module = importlib.import_module(module_name)
    real, calls = getattr(module, attr), []

    def interrupted(*args, **kwargs):
        calls.append(1)
        if len(calls) > calls_before:
            raise KeyboardInterrupt
        return real(*args, **kwargs)
    monkeypatch.setattr(module, attr, interrupted)


def _assert_interrupted(code, err, prog):
    assert code == 130, (code, err)
    assert err.count("\n") == 1 and err.startswith(f"{prog}: interrupted") and "Traceback" not in err, err


def _child_processes() -> list[str]:
    """This process's children still running (Linux; empty where /proc cannot say)."""
    pid = os.getpid()
    try:
        return Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return []


def _no_temporary_files(folder):
    return not [p for p in folder.rglob(".*") if p.name.endswith(".tmp")]


@pytest.mark.diffusion
def test_repro_interrupted_midway_keeps_the_finished_cases_and_no_report(capsys, monkeypatch, reports):
    main = repro_main
    _interrupt_at(monkeypatch, "harness.run.run_case", calls_before=1)
    code, out, err = _run(capsys, main, ["--model", "toy", "--cache", "fingerprint", "weakref", *SMALL])
    _assert_interrupted(code, err, "python -m harness repro")
    runs = [p for p in reports.iterdir() if p.name not in ("earlier", "latest")]
    assert len(runs) == 1 and sorted(p.name for p in runs[0].iterdir()) == ["results.json"]
    assert "finished cases are in" in err and str(runs[0] / "results.json") in err
    assert (reports / "latest").readlink().name == "earlier"


def test_repro_interrupted_before_any_case_leaves_no_folder(capsys, monkeypatch, reports):
    main = repro_main
    _interrupt_at(monkeypatch, "harness.run.load_model")
    code, out, err = _run(capsys, main, ["--model", "toy", *SMALL])
    _assert_interrupted(code, err, "python -m harness repro")
    assert sorted(p.name for p in reports.iterdir()) == ["earlier", "latest"]


@pytest.mark.diffusion
def test_compare_interrupted_while_writing_its_report_writes_none(capsys, monkeypatch, reports):
    from harness.__main__ import main
    _interrupt_at(monkeypatch, "harness.report.render.render_html")
    code, out, err = _run(capsys, main, ["compare", "--before", "fingerprint", "--after", "weakref", *SMALL])
    _assert_interrupted(code, err, "python -m harness compare")
    runs = [p for p in reports.iterdir() if p.name not in ("earlier", "latest")]
    assert len(runs) == 1 and sorted(p.name for p in runs[0].iterdir()) == ["results.json"]
    assert _no_temporary_files(reports) and not (reports / "latest-compare").exists()


def test_audit_interrupted_is_one_line(capsys, monkeypatch):
    from harness.__main__ import main
    _interrupt_at(monkeypatch, "harness.audit.runner.find_failure")
    code, out, err = _run(capsys, main, ["audit", "weakref"])
    _assert_interrupted(code, err, "python -m harness audit")


@pytest.mark.parametrize("given_out", [False, True], ids=["reports", "out"])
def test_differential_interrupted_leaves_no_folder(capsys, monkeypatch, reports, tmp_path, given_out):
    from harness.differential import check as differential
    from harness.__main__ import main
    monkeypatch.setattr(differential.never_reuse, "environment", lambda device, fill_byte=None: {})
    _interrupt_at(monkeypatch, "harness.differential.check.warm_processes")
    out_dir = tmp_path / "differential-run"
    code, out, err = _run(capsys, main, ["differential", "--model", "toy",
                                         *(["--out", str(out_dir)] if given_out else [])])
    _assert_interrupted(code, err, "python -m harness differential")
    assert not out_dir.exists() and sorted(p.name for p in reports.iterdir()) == ["earlier", "latest"]


def test_differential_interrupted_while_serving_stops_its_processes(capsys, monkeypatch, reports, tmp_path):
    from harness.differential import check as differential
    from harness.__main__ import main
    monkeypatch.setattr(differential.never_reuse, "environment", lambda device, fill_byte=None: {})
    _interrupt_at(monkeypatch, "harness.differential.check.serve_runs")
    before = _child_processes()
    code, out, err = _run(capsys, main, ["differential", "--model", "toy", "--out", str(tmp_path / "run")])
    _assert_interrupted(code, err, "python -m harness differential")
    assert _child_processes() == before  # the warm processes, started by then, are stopped
    assert not (tmp_path / "run").exists()


@pytest.mark.diffusion
def test_hunt_interrupted_inside_its_nested_differential_stops_the_hunt(capsys, monkeypatch, reports):
    """The hunt runs differential as a command of its own: Ctrl-C there ends the hunt
    (not one cell counted as failed), and the half-made hunt folder goes."""
    pytest.importorskip("diffusers.hooks")
    from harness.differential import check as differential
    from harness.__main__ import main
    monkeypatch.setattr(differential.never_reuse, "environment", lambda device, fill_byte=None: {})
    _interrupt_at(monkeypatch, "harness.differential.check.warm_processes")
    code, out, err = _run(capsys, main, ["hunt", "diffusers", "--hook", "TextKVCacheConfig"])
    _assert_interrupted(code, err, "python -m harness hunt")
    assert sorted(p.name for p in reports.iterdir()) == ["earlier", "latest"]


def test_hunt_of_a_hook_the_library_does_not_ship_is_one_line(capsys, reports):
    pytest.importorskip("diffusers.hooks")
    from harness.__main__ import main
    code, out, err = _run(capsys, main, ["hunt", "diffusers", "--hook", "NoSuchCacheConfig"])
    assert code == 2 and err.count("\n") == 1 and "ships no hook configuration 'NoSuchCacheConfig'" in err, err
    assert sorted(p.name for p in reports.iterdir()) == ["earlier", "latest"]


def test_uninterrupted_holds_ctrl_c_until_the_block_ends():
    import os
    import signal
    from harness.report.results import uninterrupted
    finished = False
    # Python's own handler, whatever this process inherited: started in the background, SIGINT is ignored.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            with uninterrupted():
                os.kill(os.getpid(), signal.SIGINT)
                finished = True
    finally:
        signal.signal(signal.SIGINT, previous)
    assert finished


@pytest.mark.parametrize("exits", ["os._exit(0)", "raise SystemExit(0)"])
def test_a_model_module_that_exits_on_import_is_bad_usage_not_exit_0(capsys, tmp_path, monkeypatch, exits):
    module = "exits_" + ("os" if exits.startswith("os") else "sys")
    (tmp_path / f"{module}.py").write_text(f"import os\n{exits}\ndef factory(**kwargs):\n    pass\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    code, out, err = _run(capsys, repro_main, ["--model", f"{module}:factory", "--out", str(tmp_path / "r")])
    said = "os._exit(0)" if exits.startswith("os") else "sys.exit(0)"
    _assert_one_line(code, out, err, f"cannot import {module}: it called {said}")
    assert not (tmp_path / "r").exists()
