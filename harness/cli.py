"""Pieces the command lines share: one-line usage errors, the run options, and
running a matrix with progress, summary and report."""

from __future__ import annotations

import argparse
from pathlib import Path

import torch

from cache_impl import CacheSpecError, Level, resolve
from harness.run import RunPlan, new_run_dir, run_matrix, summary_table
from repro.pipeline import PRESETS, preset
from repro.serving import STRATEGIES


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
    p.add_argument("--steps", type=_positive_int, default=None, help="denoise steps (default: the preset's)")
    p.add_argument("--preset", choices=list(PRESETS), default="tiny",
                   help="model size: tiny (CPU, seconds) or helios (real text-side dimensions, GPU)")
    p.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto",
                   help="auto: CUDA when available, else CPU")
    p.add_argument("--seed", nargs="+", type=int, default=[0, 1], help="one or more seeds (default: 0 1)")
    p.add_argument("--out", type=Path, default=None,
                   help="output folder (default: reports/<run-id>, with reports/latest pointing at it)")


def prepare_run(parser: argparse.ArgumentParser, args, caches: list[str], scenarios: list[str]):
    """Validate everything before any work starts; bad input ends in ``parser.error`` (exit 2)."""
    if args.device == "cuda" and not torch.cuda.is_available():
        parser.error("--device cuda: no CUDA device is available")
    device = torch.device("cuda" if args.device == "auto" and torch.cuda.is_available() else
                          ("cpu" if args.device == "auto" else args.device))
    try:
        for spec in caches:
            resolve(spec)
        config = preset(args.preset, **({"steps": args.steps} if args.steps else {}))
    except (CacheSpecError, ValueError) as exc:
        parser.error(str(exc))
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
    plan = RunPlan(caches=caches, scenarios=scenarios, seeds=args.seed, requests=args.requests,
                   config=config, preset=args.preset, device=device)
    return plan, out, args.out is None


def execute(plan: RunPlan, out: Path, update_latest: bool, title: str) -> dict:
    """Run the matrix with progress, print the summary, write results and report."""
    from harness.report import write_report

    print(f"running {len(plan.scenarios)} scenarios x {len(plan.caches)} caches x {len(plan.seeds)} seeds, "
          f"{plan.requests} requests each, preset {plan.preset} on {plan.device}; results in {out}", flush=True)
    results = run_matrix(plan, out, progress=lambda line: print(line, flush=True),
                         update_latest=update_latest, title=title)
    print("\ncontaminated requests / total, inconclusive requests (no address reuse), min SSIM to reference:")
    print(summary_table(results["records"], plan.caches, plan.scenarios))
    natural = [r for r in results["records"] if r["scenario"] == "natural_reuse" and r["request"] > 0]
    if natural:
        reused = sum(r["address_reused"] for r in natural)
        print(f"natural reuse on this machine: the allocator gave a request's prompt source a freed "
              f"address in {reused}/{len(natural)} requests after the first")
    write_report(out, results)
    print(f"\n{results['environment']['seconds']}s; results: {out / 'results.json'}")
    print(f"report: {out / 'report.md'}  {out / 'report.html'}")
    return results


