"""Runs caches against scenarios and references, and writes reports.

This module and the few it names are light (no torch): the command line's shared pieces
that a command which never touches a tensor (``sanitize``) needs."""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from pathlib import Path


def how_to_run() -> str:
    """The command that runs the harness in this environment, for the hints the tools
    print: the console command as it was called (``.venv/bin/address-reuse``), else this
    interpreter with ``-m harness`` (``.venv/bin/python -m harness``). A bare name only
    when the shell finds that very file on PATH (an activated environment)."""
    called = sys.argv[0] if sys.argv and sys.argv[0] else ""
    if Path(called).name == "address-reuse":
        return _as_typed(called)
    return f"{_as_typed(sys.executable)} -m harness"


def _as_typed(path: str) -> str:
    """``path`` as short as it works from here: its bare name when PATH finds the same
    file, relative when it lies under the working folder, else absolute."""
    found = shutil.which(Path(path).name)
    if found and os.path.abspath(found) == os.path.abspath(path):
        return Path(path).name
    absolute = Path(os.path.abspath(path))
    try:
        return str(absolute.relative_to(Path.cwd()))
    except ValueError:
        return str(absolute)


class OneLineParser(argparse.ArgumentParser):
    """Usage errors as one line (``prog: error: ...``) and exit 2, never a traceback."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message}\n")

    def parse_known_args(self, args=None, namespace=None):
        # An option that takes the rest of the line (``scan PATH --confirm -- COMMAND``): argparse ends
        # an option's arguments at ``--``, but the command after it is the option's, so the ``--`` goes.
        args = list(sys.argv[1:] if args is None else args)
        for at, arg in enumerate(args):
            action = self._option_string_actions.get(arg)
            if action is not None and action.nargs == argparse.REMAINDER and args[at + 1:at + 2] == ["--"]:
                del args[at + 1]
                break
        return super().parse_known_args(args, namespace)


class ReaderMayLeave:
    """``sys.stdout`` for a command whose output may be piped into a reader that stops early
    (``| head -n 1``): once the pipe is closed, the rest goes to /dev/null and the command runs
    on to its own exit code, with no ``BrokenPipeError`` traceback (here or at exit)."""

    def __init__(self, stream):
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            self._to_devnull()
            return len(text)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            self._to_devnull()

    def _to_devnull(self) -> None:
        # The stream keeps what it could not write and writes it there on the next flush.
        os.dup2(os.open(os.devnull, os.O_WRONLY), self._stream.fileno())

    def __getattr__(self, name):
        return getattr(self._stream, name)
