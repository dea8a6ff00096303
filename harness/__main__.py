"""Command line: ``python -m harness audit SPEC [--require L1]``."""

from __future__ import annotations

import argparse
import sys

from cache_impl import DESIGNS, LEVELS, CacheSpecError, resolve
from harness.audit import audit


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m harness",
        description="Prove whether a tensor-keyed cache can hand one request another's values.")
    sub = parser.add_subparsers(dest="command", required=True)
    a = sub.add_parser("audit", help="run the scenario catalogue against one cache",
                       description="Run every scenario of the catalogue against SPEC, print the outcome "
                                   "table and the guarantee level reached. Exit 0 when the level meets "
                                   "--require, 1 when it does not, 2 for bad usage.")
    a.add_argument("spec", help=f"a registered design ({', '.join(DESIGNS)}) or package.module:attr")
    a.add_argument("--require", choices=LEVELS, default="L1",
                   help="the level the cache must reach for exit 0 (default: L1, the seed fix)")
    return parser


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        factory = resolve(args.spec)
    except CacheSpecError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return audit(args.spec, factory, LEVELS.index(args.require))


if __name__ == "__main__":
    sys.exit(main())
