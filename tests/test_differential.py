"""The black-box check (``python -m harness differential``): the same requests under
the normal allocator and under one that never hands a freed address back.

It must find the pre-fix cache address-dependent without being told where the cache
is, pass the seed's fix, find a flaw hidden in a model written outside the repo, say
so when the pipeline is not deterministic, and refuse in one line where the
never-reuse allocator is missing."""

from __future__ import annotations

import json
import textwrap

import pytest
import torch

from harness.__main__ import main
from harness.differential.check import (ADDRESS_DEPENDENT, BOTH, CARRIED, CARRIES_STATE, CLEAN, DIVERGED, EXIT_CODES,
                                  ID_SHIFTS, INCONCLUSIVE, INDEPENDENT, NONDETERMINISTIC, RECYCLED, build_results,
                                  overall_verdict)
from harness.run import RunPlan
from repro import never_reuse

pytestmark = [pytest.mark.cpu]

ASAN = never_reuse.find_library("asan")
needs_asan = pytest.mark.skipif(ASAN is None, reason="libasan not found: apt-get install libasan8 to run the "
                                                     "never-reuse allocator")


def run_check(tmp_path, capsys, *args):
    out = tmp_path / "report"
    code = main(["differential", *args, "--out", str(out)])
    printed = capsys.readouterr()
    results = json.loads((out / "results.json").read_text())
    return code, results, printed.out, out


@pytest.mark.core_model
@pytest.mark.parametrize("args", [["--model", "nope"], ["--model", "nowhere.at.all:factory"],
                                  ["--model", "toy", "--cache", "nope"], ["--model", "toy", "--requests", "0"],
                                  ["--model", "toy", "--seed", "-1"], ["--cache", "weakref"],
                                  ["--call", "os:getcwd", "--id-shifts", "1", "99"],
                                  ["--model", "toy", "--id-shifts", "1"]],
                         ids=["unknown-model", "unimportable-factory", "unknown-cache", "no-requests",
                              "negative-seed", "no-model", "id-shift-too-far", "id-shifts-for-a-model"])
def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys, args):
    out = tmp_path / "report"
    with pytest.raises(SystemExit) as exit_:
        main(["differential", *args, "--out", str(out)])
    assert exit_.value.code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "error" in err and "Traceback" not in err
    assert not out.exists()


@pytest.mark.core_model
def test_a_missing_never_reuse_allocator_is_one_line_and_writes_nothing(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(never_reuse, "find_library", lambda name: None)
    out = tmp_path / "report"
    assert main(["differential", "--model", "toy", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "libasan" in err and "apt-get install libasan8" in err
    assert not out.exists()


def _outputs(latents_b: float) -> dict:
    """Four runs' outputs of one request; the second never-reuse run's latents are ``latents_b``."""
    def run(value, active):
        request = {"seed": 0, "request": 0, "request_seed": 0, "prompt": "p", "addresses": {"positive": "0x10"},
                   "reused": [], "sources": 1, "outputs": {"latents": torch.full((2, 2), value)},
                   "frames": torch.zeros(1, 8, 8, 3, dtype=torch.uint8)}
        return {"never_reuse_active": active, "model": {"name": "m"}, "requests": [request],
                "probe": {"trials": 1, "object_ids": 0, "host_addresses": 0}}
    return {"never_reuse_a": run(0.0, True), "never_reuse_b": run(latents_b, True), "normal": run(0.0, False),
            "alone": run(0.0, True)}


@pytest.mark.core_model
def test_never_reuse_runs_that_disagree_make_the_check_stop_as_nondeterministic():
    plan = RunPlan(caches=[], models={"m": ["natural_reuse"]}, seeds=[0], requests=1, device=torch.device("cpu"))
    results = build_results(plan, "m", None, _outputs(latents_b=1.0), seconds=0.0)
    assert results["verdict"] == NONDETERMINISTIC and results["records"] == []
    assert "not deterministic" in results["reason"] and "seed 0 request 0" in results["reason"]
    assert build_results(plan, "m", None, _outputs(latents_b=0.0), seconds=0.0)["verdict"] == INCONCLUSIVE
    nan = _outputs(latents_b=float("nan"))
    for run in ("never_reuse_a", "alone"):
        nan[run]["requests"][0]["outputs"]["latents"].fill_(float("nan"))
    assert build_results(plan, "m", None, nan, seconds=0.0)["verdict"] != NONDETERMINISTIC  # bitwise: NaN == NaN


@pytest.mark.core_model
def test_verdicts_follow_the_requests_on_both_axes():
    def record(verdict, reused=True, state=INDEPENDENT):
        return {"verdict": verdict, "address_reused": reused, "seed": 0, "request": 1, "prompt": "p",
                "ssim_min": 0.2, "max_abs_err": 1.0,
                "state": {"verdict": state, "ssim_min": None, "max_abs_err": 2.0}}

    assert overall_verdict([record(INCONCLUSIVE, False), record(DIVERGED)], None)[0] == ADDRESS_DEPENDENT
    assert overall_verdict([record(INCONCLUSIVE, False), record(CLEAN)], None)[0] == CLEAN
    assert overall_verdict([record(INCONCLUSIVE, False)] * 3, None)[0] == INCONCLUSIVE
    # A reference that reused addresses itself proves nothing clean, but a divergence still counts.
    assert overall_verdict([record(CLEAN)], "the probe saw reuse")[0] == INCONCLUSIVE
    assert overall_verdict([record(DIVERGED)], "the probe saw reuse")[0] == ADDRESS_DEPENDENT
    # The state axis needs no address reuse: served alone, no address can explain a difference.
    assert overall_verdict([record(INCONCLUSIVE, False, CARRIED)], None)[0] == CARRIES_STATE
    assert overall_verdict([record(CLEAN, state=CARRIED)], "the probe saw reuse")[0] == CARRIES_STATE
    assert overall_verdict([record(DIVERGED), record(CLEAN, state=CARRIED)], None)[0] == BOTH
    assert len(set(EXIT_CODES.values())) == len(EXIT_CODES) and 2 not in EXIT_CODES.values()


@needs_asan
@pytest.mark.diffusion
@pytest.mark.slow  # 12 s on a 2-core machine: make test-all (CI) runs it
def test_the_pre_fix_cache_is_found_address_dependent_and_the_fix_clean(tmp_path, capsys):
    code, results, printed, out = run_check(tmp_path / "fingerprint", capsys, "--model", "toy", "--cache",
                                            "fingerprint", "--seed", "0", "--requests", "4", "--steps", "2")
    assert code == EXIT_CODES[ADDRESS_DEPENDENT] == 1, printed
    assert results["verdict"] == ADDRESS_DEPENDENT
    first = results["first_diverged"]
    record = next(r for r in results["records"] if (r["seed"], r["request"]) == (first["seed"], first["request"]))
    assert record["verdict"] == DIVERGED and not record["outputs_equal"] and record["ssim_min"] < 0.9
    diverged = [r for r in results["records"] if r["verdict"] == DIVERGED]
    assert any(r["address_reused"] for r in diverged)  # where sources landed on freed addresses
    assert f"request {first['request']}" in printed
    for run in ("never_reuse_a", "never_reuse_b"):  # no freed address, no object id handed back
        never = results["allocators"][run]
        assert never["sources_on_freed_address"] == 0
        assert never["probe"]["object_ids"] == never["probe"]["host_addresses"] == 0
    assert results["allocators"]["normal"]["sources_on_freed_address"] > 0
    assert results["allocators"]["normal"]["probe"]["object_ids"] > 0  # CPython's pool reuses ids
    assert (out / "gifs" / "first-diverged.gif").stat().st_size > 0
    # A --model pipeline is localised too: the sanitized normal run names the cache's lookup and the key's origin.
    (match, *more) = [f for f in results["localised"] if f["by"] == "sanitizer"]
    assert match["confirmed"] and match["place"].startswith("cache_impl/fingerprint_lru.py:34: a stale address match")
    assert "called from cache_impl/fingerprint_lru.py:40 (key = fingerprint(source))" in match["place"]
    assert match["place"] in printed and match["place"] in (out / "report.md").read_text()
    assert "address-dependent" in (out / "report.md").read_text() and (out / "report.html").stat().st_size > 0
    written = (out / "report.md").read_text()
    (out / "report.md").unlink()
    assert main(["report", str(out)]) == 0  # re-rendered from results.json alone
    assert (out / "report.md").read_text() == written

    code, results, printed, _ = run_check(tmp_path / "weakref", capsys, "--model", "toy", "--cache", "weakref",
                                          "--seed", "0", "--requests", "4", "--steps", "2")
    assert code == EXIT_CODES[CLEAN] == 0, printed
    assert results["verdict"] == CLEAN
    assert all(r["outputs_equal"] for r in results["records"])
    assert any(r["verdict"] == CLEAN and r["reused_by_other_content"] for r in results["records"])


OUTSIDE_MODEL = '''
"""A model written outside the repository. Its only flaw: a helper memoises the text
projection with functools.lru_cache, the tensor argument keyed by its address."""
import functools
import weakref

import torch

from repro.models import STATS, VideoModel


class _Hashable:
    """Lets lru_cache take a tensor without keeping it alive."""

    def __init__(self, tensor):
        self.tensor = weakref.ref(tensor)
        self.key = (tensor.data_ptr(), tuple(tensor.shape), tensor.dtype)

    def __hash__(self):
        return hash(self.key)

    def __eq__(self, other):
        return self.key == other.key


@functools.lru_cache(maxsize=4)
def _projected(states, layer):
    return layer(states.tensor())


def project_text(layer, states):
    return _projected(_Hashable(states), layer)


class Model(VideoModel):
    name = "outside"

    def __init__(self, device, steps):
        torch.manual_seed(0)
        self.device, self.steps = device, steps or 3
        self.text = torch.nn.Linear(8, 8).to(device)
        self.query = torch.randn(16, 8, device=device)

    def encode(self, prompt):
        def states(text):
            return torch.randn(1, 4, 8, generator=torch.Generator().manual_seed(sum(map(ord, text)))).to(self.device)
        return {"positive": states(prompt), "negative": states("")}

    def generate(self, sources, seed, observe=None):
        x = torch.randn(16, 8, generator=torch.Generator().manual_seed(seed)).to(self.device)
        for _ in range(self.steps):
            for role in self.roles:
                text = project_text(self.text, sources[role])[0]
                x = x + torch.softmax(self.query @ text.T, dim=-1) @ text
        return x

    def decode(self, latents):
        frame = (latents.sigmoid() * 255).round().to(torch.uint8).cpu()
        return frame.unsqueeze(-1).expand(16, 8, 3).reshape(1, 16, 8, 3).repeat(2, 1, 1, 1).contiguous()

    def install_caches(self, factory, max_size=2):
        pass  # its only cache is its own

    def caches(self):
        return []

    def set_caching(self, on):
        pass

    @property
    def stats(self):
        return dict.fromkeys(STATS, 0)


def factory(device, steps=None, dtype=None):
    return Model(device, steps)

'''


@pytest.fixture
def outside_package(tmp_path, monkeypatch):
    package = tmp_path / "outside" / "theirpkg"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "pipeline.py").write_text(textwrap.dedent(OUTSIDE_MODEL))
    monkeypatch.syspath_prepend(str(tmp_path / "outside"))  # the children get the parent's sys.path
    return "theirpkg.pipeline"


@needs_asan
@pytest.mark.diffusion
def test_an_lru_cache_hidden_in_a_model_written_outside_the_repo_is_found(tmp_path, capsys, outside_package):
    # The default stream (3 seeds x 4 requests): its tiny sources land on freed addresses
    # in some requests of one seed only, depending on the hash seed.
    code, results, printed, _ = run_check(tmp_path, capsys, "--model", f"{outside_package}:factory")
    assert code == EXIT_CODES[ADDRESS_DEPENDENT], printed
    assert results["plan"]["cache"] == "built-in"
    diverged = [r for r in results["records"] if r["verdict"] == DIVERGED]
    # Its only cache is keyed by a source's address: no divergence without a source on a freed one.
    assert diverged and all(r["address_reused"] for r in diverged)


OUTSIDE_FUNCTIONS = '''
"""Pipelines written outside the repository, as plain functions fn(prompt, seed)."""
import functools
import os
import weakref

import torch

WEIGHT = torch.randn(32, 32, generator=torch.Generator().manual_seed(0))


def _states(prompt):
    # 256 KiB: malloc gives it a mapping of its own, which the next request's states get back.
    return torch.randn(2048, 32, generator=torch.Generator().manual_seed(sum(map(ord, prompt))))


class _ByAddress:
    """Lets lru_cache take a tensor without keeping it alive: hashed by its address (a hash of
    it, which no sanitizer follows: only the trace can say where)."""

    def __init__(self, tensor):
        self.tensor = weakref.ref(tensor)
        self.key = hash((tensor.data_ptr(), tuple(tensor.shape)))

    def __hash__(self):
        return hash(self.key)

    def __eq__(self, other):
        return self.key == other.key


@functools.lru_cache(maxsize=4)
def _projected(states):
    return states.tensor()[:16] @ WEIGHT


def project(states):
    return _projected(_ByAddress(states))


def _denoise(text, seed):
    x = torch.randn(64, 32, generator=torch.Generator().manual_seed(seed))
    for _ in range(3):
        x = x + torch.softmax(x @ text.T, dim=-1) @ text
    return x


def with_lru(prompt, seed):
    return _denoise(project(_states(prompt)), seed)


_LAST = {}


def with_memo(prompt, seed):
    text = _states(prompt)[:16] @ WEIGHT
    if "text" not in _LAST:  # the first request's projection, never invalidated
        _LAST["text"] = text
    return _denoise(_LAST["text"], seed)


def clean(prompt, seed):
    return {"latents": _denoise(_states(prompt)[:16] @ WEIGHT, seed),
            "frames": [torch.full((8, 8, 3), seed % 256, dtype=torch.uint8)] * 2}


_KV = {}


def _kv_by_id(states):
    # keyed by the object's id() alone, cleared on a miss: a later prompt whose states object
    # gets the same id is handed the earlier prompt's K/V
    key = str(id(states))
    if key not in _KV:
        _KV.clear()
        _KV[key] = (states[:16] @ WEIGHT, states[16:32] @ WEIGHT)
    return _KV[key]


_HELD = {}


def _kv_by_identity(states):
    # keyed by id() too, but the entry holds the tensor and is used only for that very object
    cached = _HELD.get(id(states))
    if cached is None or cached[0] is not states:
        _HELD.clear()
        cached = _HELD[id(states)] = (states, states[:16] @ WEIGHT, states[16:32] @ WEIGHT)
    return cached[1:]


def _attend(kv_of, prompt, seed):
    states = torch.randn(64, 32, generator=torch.Generator().manual_seed(sum(map(ord, prompt))))
    after = [torch.ones(4) * i for i in range(5)]  # more of the request's tensors made after its key
    x = torch.randn(16, 32, generator=torch.Generator().manual_seed(seed))
    for _ in range(3):
        k, v = kv_of(states)
        x = x + torch.softmax(x @ k.T, dim=-1) @ v
    return x


def kv_by_id(prompt, seed):
    return _attend(_kv_by_id, prompt, seed)


def kv_by_identity(prompt, seed):
    return _attend(_kv_by_identity, prompt, seed)


def returns_none(prompt, seed):
    return None


def raises(prompt, seed):
    raise ValueError("no GPU here")


def one_argument(prompt):
    return [1.0]


def exits(prompt, seed):
    raise SystemExit(3)


def exits_at_once(prompt, seed):
    os._exit(0)


def hangs(prompt, seed):
    import time
    time.sleep(60)


def hangs_in_torch(prompt, seed):
    a = torch.randn(400, 400)
    while True:  # always inside one of torch's C++ ops when the command ends
        a = torch.tanh(a @ a)


def nondeterministic(prompt, seed):
    return torch.tensor(list(os.urandom(8)))


def reads_unset(prompt, seed):
    # deterministic but for half a weight that is never written: it holds what the memory held
    weight = torch.empty(256, 256)
    weight[:, :128] = torch.randn(256, 128, generator=torch.Generator().manual_seed(seed))
    return torch.nan_to_num(torch.ones(4, 256) @ weight)
'''


@pytest.fixture
def outside_functions(tmp_path, monkeypatch):
    package = tmp_path / "outside" / "theirfns"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "fns.py").write_text(OUTSIDE_FUNCTIONS)
    monkeypatch.syspath_prepend(str(tmp_path / "outside"))  # the children get the parent's sys.path
    return "theirfns.fns"


@needs_asan
@pytest.mark.parametrize("fn, verdict", [("with_lru", ADDRESS_DEPENDENT), ("with_memo", CARRIES_STATE),
                                         ("clean", CLEAN)])
def test_call_finds_what_a_function_written_outside_the_repo_does(tmp_path, capsys, outside_functions, fn, verdict):
    code, results, printed, _ = run_check(tmp_path, capsys, "--call", f"{outside_functions}:{fn}",
                                          "--seed", "0", "--requests", "4")
    assert (code, results["verdict"]) == (EXIT_CODES[verdict], verdict), printed
    records = results["records"]
    if verdict != CLEAN:  # the first divergence is named in the function's own code, like a linter
        source = (tmp_path / "outside" / "theirfns" / "fns.py").read_text().splitlines()
        traced = [f for f in results["localised"] if f.get("by") != "sanitizer"]
        sanitized = [f for f in results["localised"] if f.get("by") == "sanitizer"]
        if verdict == ADDRESS_DEPENDENT:  # a hashed address: the sanitizer says it saw no match
            (match,) = sanitized
            assert not match["confirmed"] and "saw no stale address match" in match["place"]
        else:  # carried state involves no address: the sanitizer is not asked
            assert not sanitized
        (finding,) = traced
        path, line, _ = finding["place"].split(":", 2)
        assert path.endswith("theirfns/fns.py") and finding["place"] in printed, finding
        if verdict == ADDRESS_DEPENDENT:  # where the helper hands back the cached projection
            assert "return _projected(" in source[int(line) - 1]
        else:  # where the memo is read, and where the first request left what it holds
            read, left = (int(finding[site].rsplit(":", 1)[1]) for site in ("read", "left"))
            assert line == str(read) and finding["read"].startswith(path)
            assert source[read - 1].strip().startswith('if "text" not in _LAST:')
            assert source[left - 1].strip() == '_LAST["text"] = text'
            assert "theirfns.fns._LAST['text']" in finding["place"]
    if verdict == ADDRESS_DEPENDENT:  # only where its input landed on a freed address; nothing carried otherwise
        diverged = [r for r in records if r["verdict"] == DIVERGED]
        assert diverged and all(r["address_reused"] for r in diverged)
        assert all(r["state"]["verdict"] == INDEPENDENT for r in records)
    if verdict == CARRIES_STATE:  # every request after the first, with or without address reuse
        assert [r["state"]["verdict"] for r in records] == [INDEPENDENT] + [CARRIED] * 3
        assert all(r["outputs_equal"] for r in records)
    if verdict == CLEAN:
        assert any(r["verdict"] == CLEAN for r in records) and all(r["outputs_equal"] for r in records)
        assert all(r["ssim_min"] == 1.0 for r in records)  # its frames were found and compared
        for run in ("never_reuse_a", "never_reuse_b", "alone"):
            assert results["allocators"][run]["sources_on_freed_address"] == 0


@needs_asan
@pytest.mark.core_model
@pytest.mark.parametrize("fn, says", [("returns_none", "is None: return a tensor"),
                                      ("raises", "raised ValueError: no GPU here at"),
                                      ("exits", "called sys.exit(3) instead of returning"),
                                      ("exits_at_once", "called os._exit(0) instead of returning"),
                                      ("hangs", "did not return in 1s"),
                                      ("missing", "has no callable 'missing'"),
                                      ("one_argument", "must be fn(prompt, seed), called with a str and an int; "
                                                       "one_argument(prompt) cannot be")])
def test_a_callable_that_cannot_serve_fails_at_once_in_one_line(tmp_path, capsys, outside_functions, fn, says):
    out = tmp_path / "report"
    code = main(["differential", "--call", f"{outside_functions}:{fn}", "--call-timeout", "1", "--out", str(out)])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and says in err, err
    assert err.startswith("python -m harness differential: error: "), err
    assert not out.exists()


@needs_asan
def test_a_call_left_running_in_torch_does_not_abort_the_command_at_exit(tmp_path, outside_functions):
    # The interpreter's teardown stopped the left-behind thread inside a C++ op: the process
    # aborted after the one line ("terminate called without an active exception", exit 134).
    import os
    import subprocess
    import sys
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path / "outside"), root])}
    done = subprocess.run([sys.executable, "-m", "harness", "differential", "--call",
                           f"{outside_functions}:hangs_in_torch", "--call-timeout", "1", "--out", str(tmp_path / "r")],
                          cwd=root, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines() == [f"python -m harness differential: error: --call {outside_functions}:"
                                        f"hangs_in_torch: the first call ('red circle moving right', 0) did not "
                                        f"return in 1s (raise --call-timeout if it is only slow)"], done.stderr


@needs_asan
@pytest.mark.parametrize("fn", ["nondeterministic", "reads_unset"])
def test_a_function_nondeterministic_by_itself_is_said_so(tmp_path, capsys, outside_functions, fn):
    # Memory never written differs between the two never-reuse processes (each fills new memory
    # with its own byte): no address is blamed for it, no place named.
    code, results, printed, _ = run_check(tmp_path, capsys, "--call", f"{outside_functions}:{fn}",
                                          "--seed", "0", "--requests", "2", "--id-shifts")
    assert (code, results["verdict"]) == (EXIT_CODES[NONDETERMINISTIC], NONDETERMINISTIC), printed
    assert "fill new memory with different bytes" in results["reason"] and not results.get("localised")


@needs_asan
def test_an_id_keyed_cache_is_found_in_every_check_by_the_run_with_recycled_ids(tmp_path, capsys, outside_functions):
    # Under the normal allocator the next request's key object gets the last one's id by chance
    # (6 of 8 checks found it); with recycled ids it gets it whenever the old key is still held.
    code, results, printed, _ = run_check(tmp_path, capsys, "--call", f"{outside_functions}:kv_by_id",
                                          "--seed", "0", "--requests", "3", "--id-shifts")
    assert (code, results["verdict"]) == (EXIT_CODES[ADDRESS_DEPENDENT], ADDRESS_DEPENDENT), printed
    assert all(RECYCLED in r["diverged_in"] for r in results["records"][1:])
    source = (tmp_path / "outside" / "theirfns" / "fns.py").read_text().splitlines()
    (match,) = [f for f in results["localised"] if f["by"] == "sanitizer"]
    path, line, _ = match["place"].split(":", 2)
    assert match["confirmed"] and match["run"] == RECYCLED and path.endswith("theirfns/fns.py")
    assert "if key not in _KV" in source[int(line) - 1]  # the lookup, and where the old key was taken
    assert "theirfns/fns.py:" in match["place"].split("the old key was taken at ")[1]
    assert "(key = str(id(states)))" in match["place"]
    assert not [f for f in results["localised"] if f["by"] != "sanitizer"]  # no trace needed
    assert results["allocators"][RECYCLED]["allocator"].endswith("(a new object gets the id of the last dead one "
                                                                 "of its type)")


def test_the_shifted_runs_hand_a_later_request_the_id_keyed_entry_of_an_earlier_one(outside_functions):
    # In this process, no never-reuse allocator needed: the function's outputs against the same
    # requests computed with no cache. Where the next key object gets the last key's id depends
    # on how many objects of its size came and went in between: one shift or another lines it up
    # (measured with 60 requests: 18 and 21 of the 5 x 60 handed a stale entry; unshifted, 1 of 40).
    import importlib

    from repro.stream import serve_call
    fns = importlib.import_module(outside_functions)
    requests = [[0, i, prompt, i] for i, prompt in enumerate(["a cat", "a dog", "a red circle", "blue"] * 10)]
    fresh = [fns._attend(lambda s: (s[:16] @ fns.WEIGHT, s[16:32] @ fns.WEIGHT), r[2], r[3]) for r in requests]

    def stale(fn, shift):
        fns._KV.clear()  # each run starts with the caches empty, as in the fresh processes of a check
        fns._HELD.clear()
        served = serve_call({"call": f"{outside_functions}:{fn}", "id_shift": shift}, requests)["requests"]
        return [r for r, want in zip(served, fresh) if not torch.equal(r["outputs"]["output"], want)]

    found = {shift: stale("kv_by_id", shift) for shift in ID_SHIFTS}
    assert any(found.values()), "no shifted run handed a request the last one's entry"
    # a stale entry is handed over only where some tensor object got an earlier request's id
    assert all(r["ids_reused"] for hits in found.values() for r in hits)
    assert all(not stale("kv_by_identity", shift) for shift in (0, *ID_SHIFTS))  # it checks identity


@needs_asan
def test_a_cache_keyed_by_id_that_checks_identity_stays_clean_and_the_ids_handed_back_are_counted(
        tmp_path, capsys, outside_functions):
    # Whether the plain id()-keyed cache is found in one check is a matter of chance (the test
    # above shows that the shifted runs hand stale entries over); the cache that checks identity
    # must stay clean through every run, with the object ids handed back counted per run.
    code, results, printed, _ = run_check(tmp_path, capsys, "--call", f"{outside_functions}:kv_by_identity",
                                          "--seed", "0", "1", "--requests", "3")
    assert (code, results["verdict"]) == (EXIT_CODES[CLEAN], CLEAN), printed
    records = results["records"]
    shifted = [f"normal{k:+d}" for k in ID_SHIFTS]
    assert [name for name in results["allocators"] if name not in ("never_reuse_a", "never_reuse_b", "normal",
                                                                    "alone")] == [*shifted, RECYCLED]
    # the never-reuse runs hand out no earlier id; the normal ones do, and each request says how many
    for run in ("never_reuse_a", "never_reuse_b", "alone"):
        assert results["allocators"][run]["objects_with_earlier_id"] == 0 < results["allocators"][run]["objects"]
    assert all(results["allocators"][name]["objects_with_earlier_id"] > 0 for name in ["normal", *shifted])
    assert records[0]["ids_reused_by_run"] == dict.fromkeys(["normal", *shifted, RECYCLED], 0)  # nothing before it
    assert all(r["outputs_equal"] and not r["diverged_in"] for r in records)
    assert "tensor objects with an earlier request's id: normal" in printed
