"""The options the command lines share: argument types that answer a bad value in one
line, the limits checked before any work, the exit codes, and the run options of
``repro`` and ``compare``. Light (no torch): ``--help`` answers before anything heavy is
imported."""

from __future__ import annotations

import argparse
from pathlib import Path

from cache_impl.levels import Level
from harness.interrupt import EXIT_INTERRUPTED  # noqa: F401 - one of the exit codes, answered during imports
from repro.choices import DEFAULT_TIMEOUT, MODEL_DTYPES, MODELS, PRESETS, SCENARIOS

# Limits checked before any work: a run past them would not finish in a day on any box.
MAX_REQUESTS = 1000
MAX_STEPS = 1000
MAX_THREADS = 1024

# Exit codes of the commands that run the matrix (README, "Compare two caches").
EXIT_CONTAMINATED = 1  # compare: the after cache contaminated a request
EXIT_USAGE = 2  # bad input, one line, nothing written
EXIT_NOTHING_CONCLUSIVE = 3  # compare: no request of the after cache was conclusive
EXIT_FAILED = 4  # the run or its report failed midway: no report written, reports/latest unchanged
# EXIT_INTERRUPTED (130): Ctrl-C, one line, nothing half-written (harness.interrupt, which answers it during imports)

# ``python -m harness repro`` without --model: the toy in every scenario, the real Helios
# transformer in the scenarios of the seed's bug and of what its fix leaves open.
DEFAULT_MODELS = {"toy": None, "helios": ("freed_address_reused", "natural_reuse", "storage_swapped")}


def level_argument(text: str) -> Level:
    """``--require L2`` and the like: a Level, or a one-line usage error."""
    try:
        return Level.parse(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def seconds_argument(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not 0 <= value <= 24 * 3600:
        raise argparse.ArgumentTypeError(f"must be between 0 and 86400 seconds, got {text}")
    return value


def seed_argument(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if not 0 <= value < 2 ** 32:
        raise argparse.ArgumentTypeError(f"must be between 0 and 2**32 - 1, got {value}")
    return value


def folder_argument(text: str) -> Path:
    """A path to write into; an empty one (``--out ''``) would be the current folder."""
    if not text.strip():
        raise argparse.ArgumentTypeError("an empty path: name the folder to write into")
    return Path(text)


def count_argument(limit: int):
    """An integer from 1 to ``limit``."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
        if not 1 <= value <= limit:
            raise argparse.ArgumentTypeError(f"must be between 1 and {limit}, got {value}")
        return value
    return parse


def add_run_options(p: argparse.ArgumentParser, scenarios_help: str) -> None:
    """Options shared by ``python -m harness repro`` and ``python -m harness compare``."""
    p.add_argument("--scenario", nargs="+", choices=SCENARIOS, default=None, metavar="NAME",
                   help=f"{scenarios_help}; one or more of {', '.join(SCENARIOS)}")
    p.add_argument("--requests", type=count_argument(MAX_REQUESTS), default=3,
                   help=f"requests per case, 1 to {MAX_REQUESTS} (default 3)")
    p.add_argument("--steps", type=count_argument(MAX_STEPS), default=None,
                   help=f"denoise steps, 1 to {MAX_STEPS} (default: the model's)")
    p.add_argument("--model", nargs="+", metavar="NAME", default=None,
                   help=f"models to serve: {', '.join(MODELS)} (real diffusers architectures, tiny and "
                        "seeded) or package.module:factory for your own")
    p.add_argument("--preset", choices=PRESETS, default="tiny",
                   help="toy model size: tiny (CPU, seconds) or helios (real text-side dimensions, GPU)")
    p.add_argument("--dtype", choices=MODEL_DTYPES, default=None,
                   help="model dtype (default: the toy preset's; real models bfloat16 on CUDA, float32 on CPU)")
    p.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto",
                   help="auto: CUDA when available, else CPU")
    p.add_argument("--seed", nargs="+", type=seed_argument, default=[0, 1],
                   help="one or more seeds, 0 to 2**32 - 1 (default: 0 1)")
    p.add_argument("--threads", type=count_argument(MAX_THREADS), default=1,
                   help="torch intra-op threads on the CPU (default 1: the tiny models' ops are too small to "
                        "gain from more, and on a shared machine spinning threads made runs 2-5x slower)")
    p.add_argument("--out", type=folder_argument, default=None,
                   help="output folder (default: a new reports/<run-id>, with reports/latest pointing at it "
                        "once its report is written)")
    p.add_argument("--call-timeout", type=seconds_argument, default=DEFAULT_TIMEOUT, metavar="SECONDS",
                   help=f"longest a single call into a cache given as package.module:attr may take; one that "
                        f"takes longer ends the run (exit 4) (default {DEFAULT_TIMEOUT:g}; 0: no limit)")
