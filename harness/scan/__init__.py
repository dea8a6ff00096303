"""``python -m harness scan PATH...``: find the caches keyed by where a tensor lives.

Reads Python source (never imports it) and reports every mapping keyed by a
tensor's address or identity, every functools cache over a tensor, and every
WeakKeyDictionary keyed by tensors, with the guards found around each and the
guarantee level they suggest, and the flow from where the address is read to where
it keys the cache.

With ``--confirm -- COMMAND`` it then runs COMMAND under the sanitizer and says of each finding
whether the run confirmed it (``harness.scan.confirm``); the exit status stays the scan's.

Exit status: 0 nothing found; 1 findings; 4 some input could not be read (a file that
does not parse, is binary, too large or unreadable, a broken or looping link, a path that
does not exist), added to 0 or 1 (so 5: findings, and inputs skipped); 2 nothing could be
scanned (no path exists) or a usage error; 3 the scan itself failed (a worker process died,
out of memory perhaps): one line, no findings printed.
"""

from __future__ import annotations

import argparse
import sys

from harness.scan.formats import FORMATS
from harness.scan.rules import CODES, Finding
from harness.scan.runner import ScanError, ScanResult, scan_paths
from harness.scan.workers import WorkerDied

FINDINGS = 1  # exit status bits
SKIPPED = 4
FAILED = 3

__all__ = ["CODES", "Finding", "ScanError", "ScanResult", "add_arguments", "main", "scan_paths"]


def _jobs(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("paths", nargs="+", metavar="PATH", help="Python files or folders to read")
    p.add_argument("--format", choices=list(FORMATS), default="text",
                   help="text (path:line:col: CODE message, the default), json, or sarif (SARIF 2.1.0)")
    p.add_argument("--exclude", action="append", default=[], metavar="GLOB",
                   help="skip files and folders matching GLOB (relative path or name); repeatable")
    p.add_argument("--jobs", type=_jobs, default=None, metavar="N",
                   help="processes reading files (default: one per core)")
    p.add_argument("--confirm", nargs=argparse.REMAINDER, metavar="-- COMMAND",
                   help="then run COMMAND (last on the line, after --) under the sanitizer and mark each finding "
                        "confirmed (a stale key met there), stale keys dropped, reached without reuse, or not reached; and list the "
                        "sanitizer's stale matches no finding accounts for")
    p.add_argument("--recycle-ids", action="store_true",
                   help="with --confirm: hand each new object the id() of a dead one of its type, as sanitize "
                        "--recycle-ids does, so an id()-keyed entry that outlives its object meets a new one at once")


def main(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    command = args.confirm  # the parser took the ``--`` before it away
    if command is not None:
        if not command:
            parser.error("--confirm needs a command after it: scan PATH --confirm -- python my_script.py")
    elif args.recycle_ids:
        parser.error("--recycle-ids applies to the run --confirm makes: scan PATH --recycle-ids --confirm -- COMMAND")
    try:
        result = scan_paths(args.paths, tuple(args.exclude), args.jobs)
    except ScanError as exc:
        parser.error(str(exc))
    except WorkerDied as exc:
        print(f"{parser.prog}: {exc}; --jobs 1 reads every file in this process", file=sys.stderr)
        return FAILED
    if command:
        from harness.sanitize.command import run_sanitized, say_how_it_ran
        from harness.scan.confirm import judge

        merged = run_sanitized(parser, command, args.recycle_ids)
        say_how_it_ran(parser.prog, merged)
        result.run = {"command": command, "exit_status": merged["exit_status"], "verdict": merged["verdict"],
                      "missed": judge(result.findings, merged)}
    sys.stdout.write(FORMATS[args.format](result))
    return (FINDINGS if any(f.counts for f in result.findings) else 0) | (SKIPPED if result.skipped else 0)
