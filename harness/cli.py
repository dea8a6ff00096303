"""Pieces the command lines share: one-line usage errors, the run options, and
running a matrix with progress, summary and report."""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path

import torch

from cache_impl import CacheSpecError, Level, resolve
from harness.run import RunPlan, new_run_dir, run_matrix, summary_table
from repro.models import MODELS, REAL_MODELS, ModelSpecError, check_model_spec
from repro.models.toy import PRESETS, preset
from repro.serving import STRATEGIES

DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16}

# ``python -m repro`` without --model: the toy in every scenario, the real Helios
# transformer in the scenarios of the seed's bug and of what its fix leaves open.
DEFAULT_MODELS = {"toy": None, "helios": ("freed_address_reused", "natural_reuse", "storage_swapped")}


class OneLineParser(argparse.ArgumentParser):
    """Usage errors as one line (``prog: error: ...``) and exit 2, never a traceback."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message}\n")


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


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def add_run_options(p: argparse.ArgumentParser, scenarios_help: str) -> None:
    """Options shared by ``python -m repro`` and ``python -m harness compare``."""
    p.add_argument("--scenario", nargs="+", choices=list(STRATEGIES), default=None, metavar="NAME",
                   help=f"{scenarios_help}; one or more of {', '.join(STRATEGIES)}")
    p.add_argument("--requests", type=_positive_int, default=3, help="requests per case (default 3)")
    p.add_argument("--steps", type=_positive_int, default=None, help="denoise steps (default: the model's)")
    p.add_argument("--model", nargs="+", metavar="NAME", default=None,
                   help=f"models to serve: {', '.join(MODELS)} (real diffusers architectures, tiny and "
                        "seeded) or package.module:factory for your own")
    p.add_argument("--preset", choices=list(PRESETS), default="tiny",
                   help="toy model size: tiny (CPU, seconds) or helios (real text-side dimensions, GPU)")
    p.add_argument("--dtype", choices=list(DTYPES), default=None,
                   help="model dtype (default: the toy preset's; real models bfloat16 on CUDA, float32 on CPU)")
    p.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto",
                   help="auto: CUDA when available, else CPU")
    p.add_argument("--seed", nargs="+", type=int, default=[0, 1], help="one or more seeds (default: 0 1)")
    p.add_argument("--threads", type=_positive_int, default=1,
                   help="torch intra-op threads on the CPU (default 1: the tiny models' ops are too small to "
                        "gain from more, and on a shared machine spinning threads made runs 2-5x slower)")
    p.add_argument("--out", type=Path, default=None,
                   help="output folder (default: reports/<run-id>, with reports/latest pointing at it)")


def prepare_run(parser: argparse.ArgumentParser, args, caches: list[str], models: dict[str, list[str]]):
    """Validate everything before any work starts; bad input ends in ``parser.error`` (exit 2).
    ``models``: model spec -> the scenarios to serve it in."""
    if args.device == "cuda" and not torch.cuda.is_available():
        parser.error("--device cuda: no CUDA device is available")
    device = torch.device("cuda" if args.device == "auto" and torch.cuda.is_available() else
                          ("cpu" if args.device == "auto" else args.device))
    try:
        for spec in caches:
            resolve(spec)
        preset(args.preset, **({"steps": args.steps} if args.steps else {}))
        for spec in models:
            check_model_spec(spec)
            if spec != "toy" and args.preset != "tiny":
                raise ModelSpecError(f"--preset {args.preset} applies to the toy model only, not {spec!r}")
    except (CacheSpecError, ValueError) as exc:
        parser.error(str(exc))
    if any(spec in REAL_MODELS for spec in models) and importlib.util.find_spec("diffusers") is None:
        parser.error("the real models need diffusers: pip install -e . (or make repro) installs the pinned version")
    out = args.out if args.out is not None else new_run_dir()
    if out.exists() and not out.is_dir():
        parser.error(f"--out {out}: exists and is not a folder")
    created = not out.exists()
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = out / ".write-test"
        probe.write_text("")
        probe.unlink()
    except OSError as exc:
        if created and out.is_dir() and not any(out.iterdir()):
            out.rmdir()
        parser.error(f"--out {out}: cannot write there ({exc.strerror or exc})")
    torch.set_num_threads(args.threads)
    plan = RunPlan(caches=caches, models=models, seeds=args.seed, requests=args.requests, device=device,
                   steps=args.steps, preset=args.preset, dtype=DTYPES.get(args.dtype))
    return plan, out, args.out is None


def execute(plan: RunPlan, out: Path, update_latest: bool, title: str) -> dict:
    """Run the matrix with progress, print the summary, write results and report."""
    from harness.report import write_report

    served = ", ".join(f"{m} ({len(s)} scenarios)" for m, s in plan.models.items() if s)
    print(f"running {served} x {len(plan.caches)} caches x {len(plan.seeds)} seeds, "
          f"{plan.requests} requests each, on {plan.device}; results in {out}", flush=True)
    try:
        results = run_matrix(plan, out, progress=lambda line: print(line, flush=True),
                             update_latest=update_latest, title=title)
    except ModelSpecError as exc:  # a user's factory that builds no model: one line, as for bad usage
        print(f"error: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    print("\ncontaminated requests / total, inconclusive requests (no address reuse), min SSIM to reference:")
    print(summary_table(results["records"], plan.caches))
    for name in results["models"]:
        natural = [r for r in results["records"]
                   if r["model"] == name and r["scenario"] == "natural_reuse" and r["request"] > 0]
        if natural:
            reused = sum(r["address_reused"] for r in natural)
            print(f"natural reuse on this machine ({name}): the allocator gave a request's prompt source a "
                  f"freed address in {reused}/{len(natural)} requests after the first")
    write_report(out, results)
    print(f"\n{results['environment']['seconds']}s; results: {out / 'results.json'}")
    print(f"report: {out / 'report.md'}  {out / 'report.html'}")
    return results



def models_to_run(args, scenarios: list[str], default: dict[str, tuple[str, ...] | None]) -> dict[str, list[str]]:
    """model spec -> scenarios. ``--model`` serves each named model in every scenario;
    without it, ``default`` maps a model to the scenarios it is limited to (None: all)."""
    if args.model:
        return {spec: list(scenarios) for spec in dict.fromkeys(args.model)}
    return {spec: [s for s in scenarios if only is None or s in only] for spec, only in default.items()}
