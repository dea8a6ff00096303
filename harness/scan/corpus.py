"""``python -m harness.scan.corpus [--list-missed]``: precision and recall of the scan on real code.

``tests/scan_corpus/corpus.tsv`` lists locations in public projects, each labelled
``address-keyed`` (a cache or map that outlives the call and is keyed by an address or
identity) or ``look-alike``, with a short restatement of its shape in ``shapes/``. Each
shape is scanned on its own; a row is predicted positive when an unsuppressed finding
lands in its shape. Exit 0 after a measurement (whatever the figures), 2 on a malformed
corpus (one line on stderr).
"""

from __future__ import annotations

import csv
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from harness import OneLineParser
from harness.scan.runner import scan_paths

CORPUS = Path(__file__).resolve().parents[2] / "tests" / "scan_corpus" / "corpus.tsv"
COLUMNS = ["id", "repository", "path", "commit", "line", "label", "why", "shape"]
LABELS = ("address-keyed", "look-alike")
SINK_MARK = "# corpus: sink"
COMMIT = re.compile(r"[0-9a-f]{40}")
REPOSITORY = re.compile(r"[\w.-]+/[\w.-]+")


class CorpusError(Exception):
    """The corpus file cannot be measured (exit 2)."""


@dataclass(frozen=True)
class Row:
    id: str
    repository: str
    path: str
    commit: str
    line: int
    label: str
    why: str
    shape: Path  # a file, or a folder when the real flow crosses modules

    def shape_files(self) -> list[Path]:
        return sorted(self.shape.rglob("*.py")) if self.shape.is_dir() else [self.shape]


def _row(fields: dict, where: str, shapes: Path) -> Row:
    if any(not (fields.get(c) or "").strip() for c in COLUMNS):
        raise CorpusError(f"{where}: every column needs a value ({', '.join(COLUMNS)})")
    if not REPOSITORY.fullmatch(fields["repository"]):
        raise CorpusError(f"{where}: repository is not owner/name: {fields['repository']!r}")
    if not COMMIT.fullmatch(fields["commit"]):
        raise CorpusError(f"{where}: commit is not 40 lowercase hex digits: {fields['commit']!r}")
    if not fields["line"].isdigit() or int(fields["line"]) < 1:
        raise CorpusError(f"{where}: line is not a positive integer: {fields['line']!r}")
    if fields["label"] not in LABELS:
        raise CorpusError(f"{where}: label must be one of {', '.join(LABELS)}, got {fields['label']!r}")
    shape = shapes / fields["shape"]
    if not shape.exists() or shapes.resolve() not in shape.resolve().parents:
        raise CorpusError(f"{where}: shape {fields['shape']!r} is not a file or folder under {shapes}")
    row = Row(fields["id"], fields["repository"], fields["path"], fields["commit"], int(fields["line"]),
              fields["label"], fields["why"], shape)
    files = row.shape_files()
    if not files:
        raise CorpusError(f"{where}: shape {fields['shape']!r} holds no .py file")
    if not any(SINK_MARK in f.read_text(encoding="utf-8") for f in files):
        raise CorpusError(f"{where}: shape {fields['shape']!r} has no '{SINK_MARK}' line")
    return row


def load_corpus(path: Path = CORPUS) -> list[Row]:
    """Every row, checked; raises :class:`CorpusError` on the first malformed one."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise CorpusError(f"{path}: cannot be read: {exc}") from None
    reader = csv.DictReader(text.splitlines(), delimiter="\t", quoting=csv.QUOTE_NONE)
    if reader.fieldnames != COLUMNS:
        raise CorpusError(f"{path}:1: the header must be {' '.join(COLUMNS)} (tab-separated)")
    rows, seen = [], set()
    for number, fields in enumerate(reader, start=2):
        where = f"{path.name}:{number}"
        if None in fields or len(fields) != len(COLUMNS):
            raise CorpusError(f"{where}: expected {len(COLUMNS)} tab-separated columns")
        if fields["id"] in seen:
            raise CorpusError(f"{where}: duplicate id {fields['id']!r}")
        seen.add(fields["id"])
        rows.append(_row(fields, where, path.parent / "shapes"))
    if not rows:
        raise CorpusError(f"{path}: no rows")
    return rows


def predicted_positive(row: Row) -> bool:
    """An unsuppressed finding in the row's shape (scanned alone, so no other shape's helpers)."""
    result = scan_paths([str(row.shape)], workers=1)
    return any(not f.suppressed for f in result.findings)


def _ratio(num: int, den: int) -> str:
    return f"{num / den:.2f}" if den else "n/a"


def measure(rows: list[Row], list_missed: bool, out=None) -> None:
    out = out or sys.stdout
    outcome = {"TP": [], "FP": [], "FN": [], "TN": []}
    for row in rows:
        positive = predicted_positive(row)
        actual = row.label == "address-keyed"
        outcome[("T" if positive == actual else "F") + ("P" if positive else "N")].append(row)
    tp, fp, fn, tn = (len(outcome[k]) for k in ("TP", "FP", "FN", "TN"))
    repos = len({r.repository for r in rows})
    print(f"corpus: {len(rows)} rows from {repos} repositories "
          f"({tp + fn} address-keyed, {fp + tn} look-alike)", file=out)
    print(f"TP {tp}  FP {fp}  FN {fn}  TN {tn}", file=out)
    print(f"precision {_ratio(tp, tp + fp)}  recall {_ratio(tp, tp + fn)}", file=out)
    if list_missed:
        for title, key in (("missed (address-keyed, not reported)", "FN"),
                           ("false alarms (look-alike, reported)", "FP")):
            print(f"{title}: {len(outcome[key])}", file=out)
            for r in outcome[key]:
                print(f"  {r.repository} {r.path}:{r.line}  {r.why}  [{r.id}]", file=out)


def main(argv: list[str] | None = None) -> int:
    p = OneLineParser(prog="python -m harness.scan.corpus",
                      description="Precision and recall of the scan on the labelled real-code corpus.")
    p.add_argument("--list-missed", action="store_true",
                   help="list every row the scan got wrong (missed caches, then false alarms)")
    p.add_argument("--corpus", type=Path, default=CORPUS, metavar="TSV",
                   help=f"the corpus file (default: {CORPUS.relative_to(CORPUS.parents[2])})")
    args = p.parse_args(argv)
    try:
        rows = load_corpus(args.corpus)
    except CorpusError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    measure(rows, args.list_missed)
    return 0


if __name__ == "__main__":
    sys.exit(main())
