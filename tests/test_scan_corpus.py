"""The real-code corpus (``tests/scan_corpus``) is well-formed, and its command measures it.

No test here asserts a precision or recall: the corpus measures the scan, it does not gate it.
"""

from __future__ import annotations

import shutil
from collections import Counter

import pytest

from harness.scan.corpus import CORPUS, HELD_OUT, LABELS, SINK_MARK, load_corpus, main

pytestmark = [pytest.mark.cpu, pytest.mark.core_model]


def test_corpus_is_well_formed():
    tuned, held_out = load_corpus(), load_corpus(HELD_OUT)  # raise on a bad column, shape or sink mark
    rows = tuned + held_out
    assert len(tuned) >= 150 and len(held_out) >= 60, (len(tuned), len(held_out))
    assert len({r.repository for r in rows}) >= 30
    assert not {r.id for r in tuned} & {r.id for r in held_out}
    labels = Counter(r.label for r in rows)
    assert set(labels) == set(LABELS)
    # At least 40% safe look-alikes; enough caches that recall means something.
    assert labels["look-alike"] / len(rows) >= 0.4 and labels["address-keyed"] / len(rows) >= 0.25, labels
    for r in rows:
        marks = sum(f.read_text().count(SINK_MARK) for f in r.shape_files())
        assert marks >= 1, r.id
    # every shape file is used by exactly one row
    used = [f for r in rows for f in r.shape_files()]
    assert sorted(used) == sorted((CORPUS.parent / "shapes").rglob("*.py"))


def _tiny_corpus(tmp_path, lines: list[str]):
    rows = load_corpus()[:2]
    (tmp_path / "shapes").mkdir()
    for r in rows:
        copy = shutil.copytree if r.shape.is_dir() else shutil.copy
        copy(r.shape, tmp_path / "shapes" / r.shape.name)
    header = open(CORPUS, encoding="utf-8").readline()
    body = [open(CORPUS, encoding="utf-8").read().splitlines()[i] for i in (1, 2)]
    path = tmp_path / "corpus.tsv"
    path.write_text(header + "\n".join(lines or body) + "\n")
    return path, body


def test_command_prints_the_counts(tmp_path, capsys):
    path, _ = _tiny_corpus(tmp_path, [])
    assert main(["--corpus", str(path), "--list-missed"]) == 0
    out = capsys.readouterr().out
    assert "corpus: 2 rows" in out and "precision" in out and "recall" in out
    assert "missed (address-keyed, not reported):" in out


@pytest.mark.parametrize("damage", ["commit", "label", "shape", "columns", "sink"])
def test_malformed_corpus_exits_2_with_one_line(tmp_path, capsys, damage):
    path, body = _tiny_corpus(tmp_path, [])
    fields = body[0].split("\t")
    if damage == "commit":
        fields[3] = "abc"
    elif damage == "label":
        fields[5] = "maybe"
    elif damage == "shape":
        fields[7] = "nowhere.py"
    elif damage == "columns":
        fields = fields[:5]
    else:
        shape = tmp_path / "shapes" / fields[7]
        for f in ([shape] if shape.is_file() else shape.rglob("*.py")):
            f.write_text(f.read_text().replace(SINK_MARK, "# sink"))
    path.write_text(open(CORPUS, encoding="utf-8").readline() + "\t".join(fields) + "\n" + body[1] + "\n")
    assert main(["--corpus", str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    err = captured.err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: corpus.tsv:2:"), err



def test_bad_option_and_missing_file_exit_2_with_one_line(tmp_path, capsys):
    with pytest.raises(SystemExit) as exited:
        main(["--bogus"])
    assert exited.value.code == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1
    assert main(["--corpus", str(tmp_path / "missing.tsv")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "cannot be read" in err[0], err


def test_both_parts_are_measured_apart_and_together(capsys):
    assert main(["--per"]) == 0
    out = capsys.readouterr().out
    tuned, held_out = len(load_corpus()), len(load_corpus(HELD_OUT))
    assert f"tuned part: {tuned} rows" in out and f"held-out part: {held_out} rows" in out
    assert f"both parts: {tuned + held_out} rows" in out
    assert "per project:" in out and "  pytorch/pytorch: " in out and "per source:" in out and "  id(): " in out


def test_a_row_counts_a_finding_at_its_location_only(tmp_path, capsys):
    """Two rows share one shape's text: a safe table (an entry that holds its object) and a memo that
    keeps only ids. The memo's finding names the memo's row, not the safe table's."""
    shapes = tmp_path / "shapes"
    shapes.mkdir()
    text = ("_seen = {}\n_memo = {}\n\ndef keep(x, v):\n    _seen[id(x)] = (x, v)  {seen}\n\n"
            "def memo(x):\n    return _memo.setdefault(id(x), len(_memo))  {memo}\n")
    (shapes / "safe_row.py").write_text(text.replace("{seen}", SINK_MARK).replace("{memo}", ""))
    (shapes / "memo_row.py").write_text(text.replace("{seen}", "").replace("{memo}", SINK_MARK))
    commit = "0" * 40
    rows = [f"safe_row\tx/y\ta.py\t{commit}\t5\tlook-alike\tthe entry holds x\tsafe_row.py",
            f"memo_row\tx/y\ta.py\t{commit}\t8\taddress-keyed\tids only\tmemo_row.py"]
    path = tmp_path / "corpus.tsv"
    path.write_text(open(CORPUS, encoding="utf-8").readline() + "\n".join(rows) + "\n")
    assert main(["--corpus", str(path)]) == 0
    out = capsys.readouterr().out
    assert "TP 1  FP 0  FN 0  TN 1" in out, out


def test_a_finding_names_a_row_whose_sink_uses_its_cache(tmp_path, capsys):
    """A row citing a table's put counts a finding about that table reported at its lookup."""
    shapes = tmp_path / "shapes"
    shapes.mkdir()
    (shapes / "put_row.py").write_text(
        "import weakref\n_sessions = weakref.WeakValueDictionary()\nclass Session:\n    def __init__(self):\n"
        f"        self.hash_key = id(self)\n        _sessions[self.hash_key] = self  {SINK_MARK}\n"
        "    def attach(self, state):\n        state.session_id = self.hash_key\n"
        "def session_of(state):\n    return _sessions.get(state.session_id)\n")
    row = f"put_row\tx/y\ta.py\t{'0' * 40}\t6\taddress-keyed\ta kept id finds the next session\tput_row.py"
    path = tmp_path / "corpus.tsv"
    path.write_text(open(CORPUS, encoding="utf-8").readline() + row + "\n")
    assert main(["--corpus", str(path)]) == 0
    assert "TP 1  FP 0  FN 0  TN 0" in capsys.readouterr().out
