"""Every shell command in README.md and docs/*.md still works: a renamed flag, subcommand,
make target or test option fails here, naming the page and line.

A fenced ``sh`` block holds commands only, one a line, each optionally followed by a
``# comment``; output goes in a plain fenced block. Every command's line is parsed by the
real parser of what it calls (the harness's and repro's argparse, ``make -n``, pytest's
collection); the cheap ones (``scan`` of paths that exist) are also run. A command that
can only run on a GPU says so in its comment (``# needs a GPU``); it is parsed all the same.
The docs' stand-in for a user's package is ``mypkg``: ``mypkg.caches:...`` is checked as a
registered cache design and ``mypkg.models:...`` as the toy model.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
SHELL_BLOCK = re.compile(r"^```(?:sh|bash|shell)\n(.*?)^```", re.S | re.M)
HARNESS = ("address-reuse", ".venv/bin/address-reuse")
PYTHONS = ("python", "python3", ".venv/bin/python")
CHEAP = ("scan",)  # harness subcommands fast enough to run here


def shell_commands() -> list[tuple[str, str]]:
    """(page:line, command line) for every line of every sh block."""
    found = []
    for page in PAGES:
        text = page.read_text()
        for block in SHELL_BLOCK.finditer(text):
            first = text.count("\n", 0, block.start(1)) + 1
            for offset, line in enumerate(block.group(1).splitlines()):
                if line.strip() and not line.lstrip().startswith("#"):
                    found.append((f"{page.relative_to(ROOT)}:{first + offset}", line))
    return found


COMMANDS = shell_commands()


def words(line: str) -> list[str]:
    """The command's words: no comment, no redirection or pipe after it, no VAR=value before it."""
    tokens = shlex.split(line, comments=True)
    for i, token in enumerate(tokens):
        if token in (">", ">>", "2>", "|", "&&", ";"):
            tokens = tokens[:i]
            break
    while tokens and re.fullmatch(r"[A-Z_][A-Z0-9_]*=.*", tokens[0]):
        tokens = tokens[1:]
    return [USER_PACKAGE.get(t.partition(":")[0], t) if t.startswith("mypkg.") else t for t in tokens]


USER_PACKAGE = {"mypkg.caches": "hardened", "mypkg.models": "toy"}  # the docs' placeholders, as real specs


def parse_with_argparse(build_parser, args: list[str]):
    parser = build_parser()
    try:
        return parser.parse_args(args)
    except SystemExit as exc:  # argparse's own way out: a usage error (or --help)
        if exc.code:
            raise AssertionError(f"{parser.prog} rejects {shlex.join(args)!r}") from None
        return None


@pytest.mark.core_model
@pytest.mark.cpu
def test_the_docs_have_commands_and_a_renamed_flag_fails():
    assert len(COMMANDS) >= 10 and any(p.startswith("README.md") for p, _ in COMMANDS)
    from harness.__main__ import build_parser
    assert parse_with_argparse(build_parser, words("address-reuse audit mypkg.caches:C --require L2")[1:])
    with pytest.raises(AssertionError, match="rejects"):
        parse_with_argparse(build_parser, words("address-reuse audit hardened --level L2  # renamed")[1:])


@pytest.mark.cpu
@pytest.mark.parametrize("where, line", COMMANDS, ids=[p for p, _ in COMMANDS])
def test_every_documented_command_works(where, line, capsys):
    tokens = words(line)
    assert tokens, f"{where}: {line!r} is not a command; output belongs in a plain ``` block, not an sh block"
    program, args = tokens[0], tokens[1:]
    if program in PYTHONS and args[:2] == ["-m", "harness"]:
        program, args = "address-reuse", args[2:]
    if program in HARNESS:
        from harness.__main__ import build_parser, main
        parsed = parse_with_argparse(build_parser, args)
        if parsed is not None and parsed.command in CHEAP and all(Path(ROOT, p).exists() for p in parsed.paths):
            cwd = os.getcwd()
            os.chdir(ROOT)
            try:
                code = main(args)
            finally:
                os.chdir(cwd)
            assert code in (0, 1), f"{where}: {line!r} exited {code}: {capsys.readouterr().err[-1000:]}"
    elif program in PYTHONS and args[:2] == ["-m", "harness.scan.corpus"]:  # a measurement: cheap, so run
        from harness.scan.corpus import main
        assert main(args[2:]) == 0, f"{where}: {line!r} failed: {capsys.readouterr().err[-1000:]}"
    elif program in PYTHONS and args[:2] == ["-m", "pytest"] or Path(program).name == "pytest":
        _collect(where, line, args[2:] if program in PYTHONS else args)
    elif program in PYTHONS and args and args[0].endswith(".py"):
        assert (ROOT / args[0]).is_file(), f"{where}: {line!r}: no script {args[0]}"
    elif program == "make":
        done = subprocess.run(["make", "-n", *args], cwd=ROOT, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, f"{where}: {line!r}: make -n says {done.stderr.strip()[-500:]}"
    else:
        raise AssertionError(f"{where}: {line!r}: this test does not know how to check {program!r}; "
                             "teach tests/test_docs.py, or put output in a plain ``` block")


def _pytest_args(args: list[str]) -> list[str]:
    if "--pyargs" in args:  # a user's suite running the plugin: the plugin's options and module
        args = [a for a in args if a != "--pyargs"]
        args[args.index("harness.audit.conformance")] = str(ROOT / "harness" / "audit" / "conformance.py")
    return args


def _collect(where: str, line: str, args: list[str]) -> None:
    """pytest's own parser and collection, without running a test (and without workers)."""
    code, output = _collected()[shlex.join(_pytest_args(args))]
    assert code == 0, f"{where}: {line!r}: pytest says {output.strip()[-800:]}"


_COLLECTED: dict = {}


def _collected() -> dict:
    """Every documented pytest line collected at once, in one process (one start of
    Python and torch): its argument line -> (pytest's exit code, what it printed)."""
    if not _COLLECTED:
        lines = []
        for _, line in COMMANDS:
            tokens = words(line)
            if tokens and (Path(tokens[0]).name == "pytest" or tokens[1:3] == ["-m", "pytest"]):
                lines.append(_pytest_args(tokens[3:] if tokens[1:3] == ["-m", "pytest"] else tokens[1:]))
        script = ("import contextlib, io, json, sys, pytest\nout = {}\n"
                  "for args in json.loads(sys.argv[1]):\n"
                  "    buf = io.StringIO()\n"
                  "    with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(buf):\n"
                  "        code = pytest.main(['--collect-only', '-q', '-p', 'no:randomly', '-p', 'no:cacheprovider',"
                  " *args, '-n', '0'])\n"
                  "    out[' '.join(map(__import__('shlex').quote, args))] = [int(code), buf.getvalue()[-2000:]]\n"
                  "print(json.dumps(out))\n")
        done = subprocess.run([sys.executable, "-c", script, json.dumps(lines)], cwd=ROOT, capture_output=True,
                              text=True, timeout=300, env={**os.environ, "PYTHONPATH": str(ROOT)})
        assert done.returncode == 0, done.stderr[-2000:]
        _COLLECTED.update(json.loads(done.stdout.strip().splitlines()[-1]))
    return _COLLECTED
