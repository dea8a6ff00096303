"""The command lines of the differential check and of the hunt: their options, light (no
torch), so that ``--help`` answers at once; the work is imported once they are parsed."""

from __future__ import annotations

import argparse
from pathlib import Path

from harness import OneLineParser, how_to_run
from harness.differential import (DEFAULT_CALL_TIMEOUT, DEFAULT_REQUESTS, DEFAULT_SEEDS, ID_SHIFTS, LIBRARIES)
from harness.options import MAX_REQUESTS, MAX_STEPS, count_argument, folder_argument, seed_argument
from repro.choices import MODEL_DTYPES, MODELS


def add_arguments(p) -> None:
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument("--model", metavar="NAME", help=f"{', '.join(MODELS)}, or package.module:factory for your own")
    what.add_argument("--call", metavar="SPEC",
                      help="package.module:fn, called as fn(prompt: str, seed: int) per request; it returns a "
                           "tensor, an ndarray, a PIL image, a list of frames, or a dict of those")
    p.add_argument("--prompts", type=Path, metavar="FILE", default=None,
                   help="prompts, one a line, served in turn (default: the built-in four)")
    p.add_argument("--call-timeout", type=float, default=DEFAULT_CALL_TIMEOUT, metavar="SECONDS",
                   help=f"longest one request may take (default {DEFAULT_CALL_TIMEOUT:g})")
    p.add_argument("--cache", metavar="SPEC", default=None,
                   help="with --model: attach this cache design first, to demonstrate (default: the model as it "
                        "is, with whatever caches it has built in)")
    p.add_argument("--id-shifts", nargs="*", type=int, default=None, metavar="K",
                   help="with --call: serve the normal run again with its freed object slots shifted by each K, "
                        "so that an id()-keyed cache is exercised (default: "
                        f"{' '.join(f'{k:+d}' for k in ID_SHIFTS)}; none given: no such run)")
    p.add_argument("--recycle-ids", action=argparse.BooleanOptionalAction, default=True,
                   help="serve the normal run once more under address-reuse sanitize --recycle-ids: each new "
                        "object whose id() is taken gets the id of the last dead one of its type, so an "
                        "id-keyed entry that outlives its object meets a new one in every run, and the lookup "
                        "is named (default: on)")
    p.add_argument("--requests", type=count_argument(MAX_REQUESTS), default=DEFAULT_REQUESTS,
                   help=f"requests per seed (default {DEFAULT_REQUESTS})")
    p.add_argument("--seed", nargs="+", type=seed_argument, default=list(DEFAULT_SEEDS),
                   help="seeds; their requests are served in one stream "
                        f"(default: {' '.join(map(str, DEFAULT_SEEDS))})")
    p.add_argument("--steps", type=count_argument(MAX_STEPS), default=None, help="denoise steps (default: the model's)")
    p.add_argument("--dtype", choices=MODEL_DTYPES, default=None, help="model dtype (default: the model's)")
    p.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto",
                   help="auto: CUDA when available, else CPU")
    p.add_argument("--out", type=folder_argument, default=None,
                   help="output folder (default: reports/<run-id>, with reports/latest-differential pointing at it)")
    p.set_defaults(preset="tiny", threads=1, scenario=None)


def add_hunt_arguments(p) -> None:
    p.add_argument("library", help=f"the library to hunt in ({', '.join(LIBRARIES)})")
    p.add_argument("--model", nargs="+", default=None, help="hunt models to try, in order (default: all)")
    p.add_argument("--hook", nargs="+", default=None, help="only these hook configurations (default: every one)")
    p.add_argument("--every-model", action="store_true",
                   help="serve each hook on every model that accepts it (default: the first)")
    p.add_argument("--out", type=folder_argument, default=None,
                   help="output folder (default: reports/<run-id>, with reports/latest-hunt pointing at it)")


def differential(argv: list[str]) -> int:
    """The differential check as a command of its own, as the hunt runs it in each cell."""
    parser = OneLineParser(prog=f"{how_to_run()} differential")
    add_arguments(parser)
    args = parser.parse_args(argv)
    from harness.differential.check import main
    return main(parser, args)
