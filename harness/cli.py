"""Pieces the command lines share: one-line usage errors, the run options, and
running a matrix with progress, summary and report."""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import sys
import threading
from pathlib import Path

import torch

from cache_impl import CacheSpecError, Level, resolve
from harness import OneLineParser  # noqa: F401 - the commands import it from here
from harness.interrupt import EXIT_INTERRUPTED
from harness.report.results import Results, natural_reuse_rate, point_latest
from harness.run import RunPlan, new_run_dir, run_matrix, summary_table
from repro.models import MODELS, ModelSpecError, check_model_spec
from repro.models.toy import PRESETS, preset
from repro.serving import STRATEGIES

DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16}

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

# ``python -m repro`` without --model: the toy in every scenario, the real Helios
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
    """Options shared by ``python -m repro`` and ``python -m harness compare``."""
    p.add_argument("--scenario", nargs="+", choices=list(STRATEGIES), default=None, metavar="NAME",
                   help=f"{scenarios_help}; one or more of {', '.join(STRATEGIES)}")
    p.add_argument("--requests", type=count_argument(MAX_REQUESTS), default=3,
                   help=f"requests per case, 1 to {MAX_REQUESTS} (default 3)")
    p.add_argument("--steps", type=count_argument(MAX_STEPS), default=None,
                   help=f"denoise steps, 1 to {MAX_STEPS} (default: the model's)")
    p.add_argument("--model", nargs="+", metavar="NAME", default=None,
                   help=f"models to serve: {', '.join(MODELS)} (real diffusers architectures, tiny and "
                        "seeded) or package.module:factory for your own")
    p.add_argument("--preset", choices=list(PRESETS), default="tiny",
                   help="toy model size: tiny (CPU, seconds) or helios (real text-side dimensions, GPU)")
    p.add_argument("--dtype", choices=list(DTYPES), default=None,
                   help="model dtype (default: the toy preset's; real models bfloat16 on CUDA, float32 on CPU)")
    p.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto",
                   help="auto: CUDA when available, else CPU")
    p.add_argument("--seed", nargs="+", type=seed_argument, default=[0, 1],
                   help="one or more seeds, 0 to 2**32 - 1 (default: 0 1)")
    p.add_argument("--threads", type=count_argument(MAX_THREADS), default=1,
                   help="torch intra-op threads on the CPU (default 1: the tiny models' ops are too small to "
                        "gain from more, and on a shared machine spinning threads made runs 2-5x slower)")
    p.add_argument("--out", type=Path, default=None,
                   help="output folder (default: a new reports/<run-id>, with reports/latest pointing at it "
                        "once its report is written)")


_ANSWERING_CTRL_C = False  # a run_command in this process is handling SIGINT


def run_command(prog: str, command) -> int:
    """Run ``command()`` and return its exit code; Ctrl-C anywhere in it ends in one
    line and EXIT_INTERRUPTED. Files are written atomically and pointers moved only
    once a report is whole (``harness.report.results``), so an interrupt leaves the last whole
    state: run folders this process made and left empty are removed, one that holds
    finished cases keeps them in results.json, and no ``latest`` pointer moves."""
    global _ANSWERING_CTRL_C
    # Signals reach the main thread only; and in a command run inside another (the hunt
    # runs differential) the outermost one answers Ctrl-C, so it ends the whole command.
    if threading.current_thread() is not threading.main_thread() or _ANSWERING_CTRL_C:
        return command()
    _ANSWERING_CTRL_C = True
    handled = threading.Event()
    resends: list[threading.Timer] = []

    def interrupt(signum, frame):
        if not handled.is_set():  # a resend that arrives after the line was printed is dropped
            raise KeyboardInterrupt

    def dropped(unraisable):
        # A KeyboardInterrupt raised inside a callback that Python runs from C (a weakref
        # or gc callback, a __del__) is reported there and dropped: send the signal again,
        # from another thread once the callback is done, so that it ends the command.
        if issubclass(unraisable.exc_type, KeyboardInterrupt):
            resends.append(threading.Timer(0.05, os.kill, (os.getpid(), signal.SIGINT)))
            resends[-1].start()
        else:
            previous_hook(unraisable)

    previous_handler = signal.signal(signal.SIGINT, interrupt)
    previous_hook, sys.unraisablehook = sys.unraisablehook, dropped
    try:
        return command()
    except KeyboardInterrupt:
        handled.set()
        unreported = []
        for folder in _NEW_FOLDERS:
            _discard_if_empty(folder)
            if (folder / "results.json").is_file() and not (folder / "report.md").is_file():
                unreported.append(str(folder / "results.json"))
        print(f"{prog}: interrupted" + (f"; no report written, the finished cases are in {', '.join(unreported)}"
                                        if unreported else ""), file=sys.stderr)
        return EXIT_INTERRUPTED
    finally:
        _ANSWERING_CTRL_C = False
        handled.set()
        for timer in resends:  # every resend sent (to `interrupt`, which now ignores it) or cancelled
            timer.cancel()
            timer.join()
        sys.unraisablehook = previous_hook
        signal.signal(signal.SIGINT, previous_handler)


_NEW_FOLDERS: list[Path] = []  # run folders this process made, for run_command to tidy after an interrupt


def reject_duplicates(parser: argparse.ArgumentParser, **lists) -> None:
    """``--cache a a`` would serve and count every request of ``a`` twice: refuse it."""
    for option, values in lists.items():
        seen = set()
        for v in values or ():
            if v in seen:
                parser.error(f"--{option} names {v} twice")
            seen.add(v)


def prepare_run(parser: argparse.ArgumentParser, args, caches: list[str], models: dict[str, list[str]]):
    """Validate everything before any work starts; bad input ends in ``parser.error`` (exit 2)
    and leaves nothing behind. ``models``: model spec -> the scenarios to serve it in."""
    reject_duplicates(parser, cache=caches, seed=args.seed, scenario=args.scenario, model=args.model)
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
    if args.out is not None:
        out = args.out
        if out.exists() and not out.is_dir():
            parser.error(f"--out {out}: exists and is not a folder")
        created = not out.exists()
        try:
            out.mkdir(parents=True, exist_ok=True)
            if created:
                _NEW_FOLDERS.append(out)
            probe = out / ".write-test"
            probe.write_text("")
            probe.unlink()
        except OSError as exc:
            if created and out.is_dir() and not any(out.iterdir()):
                out.rmdir()
            parser.error(f"--out {out}: cannot write there ({exc.strerror or exc})")
    else:
        try:
            out = new_run_dir()
        except OSError as exc:
            parser.error(f"cannot make a run folder under reports/ ({exc.strerror or exc})")
        _NEW_FOLDERS.append(out)
    torch.set_num_threads(args.threads)
    plan = RunPlan(caches=caches, models=models, seeds=args.seed, requests=args.requests, device=device,
                   steps=args.steps, preset=args.preset, dtype=DTYPES.get(args.dtype))
    return plan, out, args.out is None


def execute(plan: RunPlan, out: Path, update_latest: bool, title: str, prog: str, kind: str = "repro",
            pair: dict | None = None) -> Results:
    """Run the matrix with progress, print the summary, write results and report, and
    point ``reports/latest`` (per kind) at the run once its report is written.

    A failure midway ends the process with EXIT_FAILED and one line prefixed with ``prog``:
    results.json keeps the finished cases, no report is written and the latest pointer is
    unchanged."""
    from harness.report.render import ReportError, write_report

    served = ", ".join(f"{m} ({len(s)} scenarios)" for m, s in plan.models.items() if s)
    say(f"running {served} x {len(plan.caches)} caches x {len(plan.seeds)} seeds, "
        f"{plan.requests} requests each, on {plan.device}")
    try:
        results = run_matrix(plan, out, progress=say, title=title, kind=kind, pair=pair)
    except ModelSpecError as exc:  # a user's factory that builds no model: one line, as for bad usage
        _discard_if_empty(out)
        fail(f"{prog}: error: {exc}", EXIT_USAGE)
    except Exception as exc:  # noqa: BLE001 - a user's cache or model may raise anything
        _discard_if_empty(out)
        kept = out / "results.json"
        fail(f"{prog}: error: the run failed midway: {type(exc).__name__}: {exc}; no report written"
             + (f" (the finished cases are in {kept})" if kept.is_file() else ""), EXIT_FAILED)
    say("\ncontaminated requests / total, inconclusive requests (no address reuse), min SSIM to reference:")
    say(summary_table(results))
    for name in results.models:
        rate = natural_reuse_rate(results.records, name)
        if rate:
            say(f"natural reuse on this machine ({name}): the allocator gave a request's prompt source a "
                f"freed address in {rate[0]}/{rate[1]} requests after the first")
    try:
        write_report(out, results)
    except (ReportError, OSError) as exc:
        fail(f"{prog}: error: cannot write the report in {out}: {exc}", EXIT_FAILED)
    if update_latest:
        point_latest(out, kind)
    say(f"\n{results.environment['seconds']}s; results: {out / 'results.json'}")
    say(f"report: {out / 'report.md'}  {out / 'report.html'}")
    return results


def say(line: str = "") -> None:
    """Print a line of progress or summary. Output piped into a reader that stopped
    (``| head``) is dropped, and the run goes on to write its results and report."""
    try:
        print(line, flush=True)
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def fail(line: str, code: int):
    print(line, file=sys.stderr)
    raise SystemExit(code)


def _discard_if_empty(folder: Path) -> None:
    """Remove a run folder that holds nothing (the run never started)."""
    if folder.is_dir() and not any(folder.iterdir()):
        shutil.rmtree(folder, ignore_errors=True)


def models_to_run(args, scenarios: list[str], default: dict[str, tuple[str, ...] | None]) -> dict[str, list[str]]:
    """model spec -> scenarios. ``--model`` serves each named model in every scenario;
    without it, ``default`` maps a model to the scenarios it is limited to (None: all)."""
    if args.model:
        return {spec: list(scenarios) for spec in dict.fromkeys(args.model)}
    return {spec: [s for s in scenarios if only is None or s in only] for spec, only in default.items()}
