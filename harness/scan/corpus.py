"""``python -m harness.scan.corpus [--list-missed] [--per]``: precision and recall of the scan on real code.

``tests/scan_corpus/corpus.tsv`` and ``held_out.tsv`` list locations in public projects, each
labelled ``address-keyed`` (a cache or map that outlives the call, keyed by an address or
identity, whose entry neither holds its object nor goes when the object dies) or
``look-alike`` (the same surface, safe), with a short restatement of its shape in ``shapes/``.
``held_out.tsv`` is the part the rules are not tuned on: its rows were labelled from the
projects' code alone, not from what the scan reports, and no rule is changed to fit them (docs/scan.md
says which rules came after which of its rows had been measured); it is reported apart.
Each shape is scanned on its own; a row is predicted positive when a finding that counts
(neither suppressed nor safe) names its location: a line the finding lists, or a step of its flow,
is one its shape marks ``# corpus: sink``, or that line uses the cache the finding is about. Exit 0 after a measurement (whatever the
figures), 2 on a malformed corpus (one line on stderr).
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
HELD_OUT = CORPUS.with_name("held_out.tsv")  # not tuned on: reported apart
# What a shape reads its key from, for the figures per source (the first that its text shows).
SOURCES = [("data_ptr()", re.compile(r"data_ptr")), ("_cdata", re.compile(r"_cdata")),
           ("array interface", re.compile(r"__(?:cuda_)?array_interface__|\.ctypes\.data|buffer_info")),
           ("ctypes or driver pointer", re.compile(r"addressof|c_void_p|\.value\b|\bptr\b|_ptr\b")),
           ("id()", re.compile(r"\bid\(")), ("functools cache", re.compile(r"lru_cache|functools\.cache"))]
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

    def source(self) -> str:
        """What its key is read from, as its shape's text shows (``SOURCES``)."""
        text = "\n".join(f.read_text(encoding="utf-8") for f in self.shape_files())
        return next((name for name, pattern in SOURCES if pattern.search(text)), "other")


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


def sink_lines(row: Row) -> dict[tuple[Path, int], str]:
    """The text of every line its shape marks ``# corpus: sink`` (the row's location), by (file, line)."""
    return {(f.resolve(), number): text for f in row.shape_files()
            for number, text in enumerate(f.read_text(encoding="utf-8").splitlines(), 1) if SINK_MARK in text}


def predicted_positive(row: Row) -> bool:
    """A finding that counts (neither suppressed nor safe) and names the row's location: one of the
    lines it lists, or a step of its flow, is a sink line of the row's shape (scanned alone, no other
    shape's helpers), or the cache it is about is the one a sink line uses (the finding may be at its
    lookup where the row cites its put). A finding on another table of the shape is about another
    location, not this row."""
    result = scan_paths([str(row.shape)], workers=1)
    sinks = sink_lines(row)
    return any(f.counts and (any((Path(path).resolve(), line) in sinks for path, line in _named(f))
                             or any(_uses(text, f.cache) for (file, _), text in sinks.items()
                                    if file == Path(f.path).resolve()))
               for f in result.findings)


def _uses(line: str, cache: str) -> bool:
    """Does a sink line's code name the cache a finding is about (``_sessions[k] = s`` and ``_sessions``)?"""
    code = line.partition("#")[0]
    return bool(cache) and re.search(r"(?<![\w.])%s(?!\w)" % re.escape(cache), code) is not None


def _named(finding) -> list[tuple[str, int]]:
    """The places a finding names: the lines of its file that use the cache, and its flow's steps."""
    return [(finding.path, line) for line in finding.lines or [finding.line]] + \
        [(step["path"], step["line"]) for step in finding.flow]


def _ratio(num: int, den: int) -> str:
    return f"{num / den:.2f}" if den else "n/a"


def _figures(outcome: dict[str, list[Row]]) -> str:
    tp, fp, fn, tn = (len(outcome[k]) for k in ("TP", "FP", "FN", "TN"))
    return (f"TP {tp}  FP {fp}  FN {fn}  TN {tn}  "
            f"precision {_ratio(tp, tp + fp)}  recall {_ratio(tp, tp + fn)}")


def measure(rows: list[Row], list_missed: bool, out=None, per: bool = False, title: str = "corpus") -> dict:
    """Scan each row's shape; print the counts (and per project and per source with ``per``)."""
    out = out or sys.stdout
    outcome = {"TP": [], "FP": [], "FN": [], "TN": []}
    for row in rows:
        positive = predicted_positive(row)
        actual = row.label == "address-keyed"
        outcome[("T" if positive == actual else "F") + ("P" if positive else "N")].append(row)
    tp, fp, fn, tn = (len(outcome[k]) for k in ("TP", "FP", "FN", "TN"))
    repos = len({r.repository for r in rows})
    print(f"{title}: {len(rows)} rows from {repos} repositories "
          f"({tp + fn} address-keyed, {fp + tn} look-alike)", file=out)
    print(f"TP {tp}  FP {fp}  FN {fn}  TN {tn}", file=out)
    print(f"precision {_ratio(tp, tp + fp)}  recall {_ratio(tp, tp + fn)}", file=out)
    if per:
        for name, group in (("project", lambda r: r.repository), ("source", Row.source)):
            print(f"per {name}:", file=out)
            for value in sorted({group(r) for r in rows}):
                mine = {k: [r for r in v if group(r) == value] for k, v in outcome.items()}
                print(f"  {value}: {sum(map(len, mine.values()))} rows, {_figures(mine)}", file=out)
    if list_missed:
        for heading, key in (("missed (address-keyed, not reported)", "FN"),
                             ("false alarms (look-alike, reported)", "FP")):
            print(f"{heading}: {len(outcome[key])}", file=out)
            for r in outcome[key]:
                print(f"  {r.repository} {r.path}:{r.line}  {r.why}  [{r.id}]", file=out)
    return outcome


def main(argv: list[str] | None = None) -> int:
    p = OneLineParser(prog="python -m harness.scan.corpus",
                      description="Precision and recall of the scan on the labelled real-code corpus.")
    p.add_argument("--list-missed", action="store_true",
                   help="list every row the scan got wrong (missed caches, then false alarms)")
    p.add_argument("--per", action="store_true", help="figures per project and per address source as well")
    p.add_argument("--corpus", type=Path, metavar="TSV",
                   help=f"one corpus file (default: {CORPUS.relative_to(CORPUS.parents[2])}, then the held-out "
                        f"{HELD_OUT.name}, each apart, then both together)")
    args = p.parse_args(argv)
    parts = [("corpus", args.corpus)] if args.corpus else [("tuned part", CORPUS), ("held-out part", HELD_OUT)]
    try:
        loaded = [(title, load_corpus(path)) for title, path in parts]
    except CorpusError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    outcomes = [measure(rows, args.list_missed, per=args.per, title=title) for title, rows in loaded]
    if len(loaded) > 1:
        both = {k: [r for o in outcomes for r in o[k]] for k in outcomes[0]}
        rows = [r for _, part in loaded for r in part]
        print(f"both parts: {len(rows)} rows from {len({r.repository for r in rows})} repositories; "
              f"{_figures(both)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
