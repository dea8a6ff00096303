"""``python -m repro``: serve back-to-back fake requests through each cache design
and show which requests got another request's cross-attention K/V.

This entry point is the top of the stack: it drives the harness (comparison,
results, report) over the reproduction. The ``repro`` library modules never
import ``harness``.
"""

from __future__ import annotations

import sys

from harness.interrupt import interrupted_is_one_line

PROG = "python -m repro"

with interrupted_is_one_line(PROG):  # importing torch takes seconds: Ctrl-C there is one line too
    from cache_impl import DESIGNS
    from harness.cli import (DEFAULT_MODELS, STRATEGIES, OneLineParser, add_run_options, execute, models_to_run,
                             prepare_run, run_command)


def build_parser():
    parser = OneLineParser(
        prog=PROG,
        description="Serve back-to-back fake requests through a video model (by default the toy Helios "
                    "in every scenario, and the real Helios transformer, tiny, in the forced, natural and "
                    "storage-swap scenarios) with each cache design, make the allocator recycle addresses, "
                    "and compare every request with a cache-free run of the same prompt and seed. Writes "
                    "results.json and a report (md, html, MP4s and GIFs, plots) into the output folder. Exit 0 "
                    "when both are written, 2 for bad usage (nothing written), 4 when the run or its report fails "
                    "midway (no report written, reports/latest unchanged), 130 on Ctrl-C (the same).")
    parser.add_argument("--cache", nargs="+", metavar="SPEC", default=list(DESIGNS),
                        help="cache designs to run: registered names or package.module:attr "
                             f"(default: all of {', '.join(DESIGNS)})")
    add_run_options(parser, "how addresses come back between requests (default: all)")
    return parser


def main(argv=None) -> int:
    parser = build_parser()

    def run() -> int:
        args = parser.parse_args(argv)
        models = models_to_run(args, args.scenario or list(STRATEGIES), DEFAULT_MODELS)
        plan, out, update_latest = prepare_run(parser, args, args.cache, models)
        execute(plan, out, update_latest, "Address-reuse report", parser.prog)
        return 0

    return run_command(PROG, run)


if __name__ == "__main__":
    sys.exit(main())
