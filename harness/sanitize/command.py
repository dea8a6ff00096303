"""``address-reuse sanitize [options] -- COMMAND [ARGS...]``: run any command with the sanitizer
on in every Python process it starts, then report what they found.

Like ``coverage run``: the command runs as it would, with ``bootstrap/`` first on PYTHONPATH and
``ADDRESS_REUSE_SANITIZE`` naming a data folder; each Python process writes its findings
there as it exits (also through ``os._exit`` and in forked children), and this command merges
them once the command has ended."""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from harness.files import check_writable
from harness.sanitize import runtime
from harness.sanitize.report import (EXIT_CLEAN, EXIT_COMMAND_FAILED, EXIT_INCONCLUSIVE, EXIT_STALE, EXIT_USAGE,
                                     FORMATS, VERDICTS, merge, read_folder, summary, write_atomic)

BOOTSTRAP = Path(__file__).resolve().parent / "bootstrap"

DESCRIPTION = (
    "Run COMMAND (a Python script, python -m pytest ..., a serving loop; any command, and every "
    "Python process it starts) with address tracking on from interpreter start: every data_ptr() and "
    "id() a Python caller takes remembers what it was taken from, and a lookup where such a key meets "
    "an equal one of an object that is gone is reported with where each key was taken and where they "
    "met. The command's output is untouched; the report goes to stderr (or --output). "
    f"Exit {EXIT_CLEAN} no stale match and addresses or ids came back, {EXIT_STALE} a stale match, "
    f"{EXIT_USAGE} bad usage or a command that cannot start, {EXIT_INCONCLUSIVE} inconclusive (no tracked "
    f"address or id ever came back), {EXIT_COMMAND_FAILED} the command failed and no stale match was "
    "found (its status is said), 130 on Ctrl-C.")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--format", choices=list(FORMATS), default="text",
                        help="report format (default: text on stderr; json and sarif go to --output, or to "
                             "stdout after the command's own output)")
    parser.add_argument("--output", type=Path, metavar="FILE",
                        help="write the report there (whole or not at all) instead of stderr or stdout")
    parser.add_argument("--recycle-ids", action="store_true",
                        help="hand each new object whose id() is taken the id of the last dead object of its "
                             "type whose id was taken, as an allocator that always reuses would: an id-keyed "
                             "entry that outlives its object meets a new one at once, not when CPython happens "
                             "to reuse the slot. Ids become odd numbers that are no object's address: code "
                             "that turns an id back into an object (ctypes.cast) cannot run with it")
    parser.add_argument("argv", nargs=argparse.REMAINDER, metavar="-- COMMAND [ARGS...]",
                        help="the command to run, after --")


def environment(folder: str, base: dict | None = None, recycle_ids: bool = False) -> dict:
    """``base`` (default: this process's environment) with the sanitizer on, writing into
    ``folder``, and its bootstrap first on PYTHONPATH."""
    env = dict(os.environ if base is None else base)
    env[runtime.ENV] = folder
    if recycle_ids:
        env[runtime.RECYCLE_ENV] = "1"
    else:
        env.pop(runtime.RECYCLE_ENV, None)
    env["PYTHONPATH"] = os.pathsep.join([str(BOOTSTRAP)] + [p for p in [env.get("PYTHONPATH")] if p])
    return env


def job(args: list, recycle_ids: bool = False) -> int:
    """A job for a warm process (``repro.warm``): ``[FOLDER, package.module:function, ARGS...]``
    calls ``function(ARGS)`` with the sanitizer on, writing its findings into FOLDER as the job
    ends. The process imported its pipeline untracked; what the job serves is tracked, which is
    where a stale key meets a new one. Saves a process start and the imports over a fresh one."""
    from repro.spec import load_callable

    folder, function, *rest = args
    os.environ[runtime.ENV] = folder
    if recycle_ids:
        os.environ[runtime.RECYCLE_ENV] = "1"
    runtime.start_from_environment()
    return load_callable(function, RuntimeError, function, f"{function}: expected package.module:function")(rest)


def recycling_job(args: list) -> int:
    """:func:`job` with ``--recycle-ids``: a new object gets the id of the last dead one of its type."""
    return job(args, recycle_ids=True)


def main(parser: argparse.ArgumentParser, args) -> int:
    command = list(args.argv)
    if command[:1] == ["--"]:
        command = command[1:]
    if not command:
        parser.error("no command to run: give it after --, e.g. sanitize -- python my_server.py")
    if args.output is not None and not args.output.parent.is_dir():
        parser.error(f"--output {args.output}: folder {args.output.parent} does not exist")
    if args.output is not None and args.output.is_dir():  # said before the command runs, not after
        parser.error(f"--output {args.output} is a folder: give a file path, e.g. {args.output / 'sanitize.json'}")
    if args.output is not None:  # a report that cannot be written is said before the command runs
        try:
            check_writable(args.output.parent)
        except OSError as exc:
            parser.error(f"--output {args.output}: cannot write in {args.output.parent}: {exc.strerror or exc}")
    merged = run_sanitized(parser, command, args.recycle_ids)
    _write(parser, args, merged)
    say_how_it_ran(parser.prog, merged)
    status = merged["exit_status"]
    code = VERDICTS[merged["verdict"]]
    if code == EXIT_STALE:
        return EXIT_STALE
    return EXIT_COMMAND_FAILED if status != 0 else code


def run_sanitized(parser, command: list, recycle_ids: bool = False) -> dict:
    """Run ``command`` with the sanitizer on in every Python process it starts; what they found,
    merged, with ``command`` and its ``exit_status``. A command that cannot start is one line, exit 2."""
    folder = tempfile.mkdtemp(prefix="address-reuse-sanitize-")
    try:
        try:
            process = subprocess.Popen(command, env=environment(folder, recycle_ids=recycle_ids))
        except OSError as exc:
            parser.exit(EXIT_USAGE, f"{parser.prog}: error: cannot start {command[0]!r}: "
                                    f"{exc.strerror or exc}\n")
        try:
            status = process.wait()
        except KeyboardInterrupt:
            _stop(process)  # Ctrl-C reached the command too (one process group): let it end first
            raise
        merged = merge(read_folder(Path(folder)))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    merged["command"] = command
    merged["exit_status"] = status
    return merged


def say_how_it_ran(prog: str, merged: dict) -> None:
    """One line on stderr each: no Python process was sanitized; the command failed."""
    if merged["processes"] == 0:
        print(f"{prog}: no Python process ran under the sanitizer (not a Python command, or one started "
              "with -I or -S, which skip PYTHONPATH or sitecustomize)", file=sys.stderr)
    status = merged["exit_status"]
    if status != 0:
        how = f"was killed by signal {-status}" if status < 0 else f"exited with status {status}"
        print(f"{prog}: the command {how}", file=sys.stderr)


def _write(parser, args, merged: dict) -> None:
    content = FORMATS[args.format](merged)
    if args.output is not None:
        try:
            write_atomic(args.output, content)
        except OSError as exc:
            parser.exit(EXIT_COMMAND_FAILED, f"{parser.prog}: error: cannot write {args.output}: "
                                             f"{exc.strerror or exc}\n")
        if args.format != "text":  # the file holds the details; stderr still gets the verdict
            print(summary(merged) if not merged["findings"] else
                  f"{parser.prog}: {sum(f['count'] for f in merged['findings'])} stale address match(es) at "
                  f"{len(merged['findings'])} place(s): {args.output}", file=sys.stderr)
        return
    stream = sys.stderr if args.format == "text" else sys.stdout
    try:
        stream.write(content)
        stream.flush()
    except BrokenPipeError:  # piped into head: the reader has what it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), stream.fileno())


def _stop(process: subprocess.Popen) -> None:
    try:
        process.wait(timeout=10)
    except (subprocess.TimeoutExpired, KeyboardInterrupt):
        process.kill()
        process.wait()
