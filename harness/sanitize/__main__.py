"""``python -m harness.sanitize [options] -- COMMAND [ARGS...]``: the sanitize command on its
own. It imports nothing heavy, so it starts at once; ``address-reuse sanitize`` and
``python -m harness sanitize`` come here before the other commands' imports."""

from __future__ import annotations

import sys

from harness import OneLineParser
from harness.interrupt import interrupted_is_one_line
from harness.sanitize.command import DESCRIPTION, add_arguments
from harness.sanitize.command import main as run


def main(argv=None, prog: str = "python -m harness.sanitize") -> int:
    parser = OneLineParser(prog=prog, description=DESCRIPTION)
    add_arguments(parser)
    with interrupted_is_one_line(prog):
        return run(parser, parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
