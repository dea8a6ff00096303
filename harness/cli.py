"""Running a matrix for a command line: validating its options (``prepare_run``), serving
it with progress, summary and report (``execute``), and Ctrl-C as one line
(``run_command``). The options themselves are in ``harness.options``, which is light."""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import sys
import threading
from pathlib import Path

import torch

from cache_impl import CacheSpecError, resolve
from cache_impl.registry import CtrlC, exit_call, exits_raise
from harness.files import check_writable
from harness.interrupt import EXIT_INTERRUPTED
from harness.options import EXIT_FAILED, EXIT_USAGE
from harness.report.results import Results, natural_reuse_rate, point_latest
from harness.run import RunPlan, new_run_dir, run_matrix, summary_table
from repro.guard import CacheCallFailed
from repro.models import ModelSpecError, check_model_spec
from repro.models.toy import preset

_ANSWERING_CTRL_C = False  # a run_command in this process is handling SIGINT


def run_command(prog: str, command, program: bool = False) -> int:
    """Run ``command()`` and return its exit code; Ctrl-C anywhere in it ends in one
    line and EXIT_INTERRUPTED. Files are written atomically and pointers moved only
    once a report is whole (``harness.report.results``), so an interrupt leaves the last whole
    state: run folders this process made and left empty are removed, one that holds
    finished cases keeps them in results.json, and no ``latest`` pointer moves.
    ``program``: this process ends when it returns, so a Ctrl-C after the answer is
    ignored rather than given back to Python's default handler (a traceback at exit)."""
    global _ANSWERING_CTRL_C
    # Signals reach the main thread only; and in a command run inside another (the hunt
    # runs differential) the outermost one answers Ctrl-C, so it ends the whole command.
    if threading.current_thread() is not threading.main_thread() or _ANSWERING_CTRL_C:
        return command()
    _ANSWERING_CTRL_C = True
    # Set once the answer is decided (returned or interrupted). A list item, not an Event: the
    # store is one bytecode, so no signal handler runs between the command's return and it
    # (Event.set() is a Python call, and a Ctrl-C landing there was a traceback).
    answered = [False]
    interrupted = [False]
    resends: list[threading.Timer] = []

    def interrupt(signum, frame):
        if not answered[0]:  # a Ctrl-C after the answer, or a resend after the line, is dropped
            interrupted[0] = True
            raise CtrlC

    def dropped(unraisable):
        # A KeyboardInterrupt raised inside a callback that Python runs from C (a weakref
        # or gc callback, a __del__) is reported there and dropped: send the signal again,
        # from another thread once the callback is done, so that it ends the command.
        if issubclass(unraisable.exc_type, KeyboardInterrupt):
            resends.append(threading.Timer(0.05, os.kill, (os.getpid(), signal.SIGINT)))
            resends[-1].start()
        elif not interrupted[0]:  # after a Ctrl-C, the __del__ of an object it cut short in its
            previous_hook(unraisable)  # __init__ fails (torch's StorageWeakRef): not worth a traceback

    previous_handler = signal.signal(signal.SIGINT, interrupt)
    previous_hook, sys.unraisablehook = sys.unraisablehook, dropped
    try:
        with exits_raise():  # a user's os._exit is a failure said in one line, not the command's exit code
            code = command()
        answered[0] = True
        return code
    except KeyboardInterrupt:
        answered[0] = True
        unreported = []
        for folder in _NEW_FOLDERS:
            _discard_if_empty(folder)
            if (folder / "results.json").is_file() and not (folder / "report.md").is_file():
                unreported.append(str(folder / "results.json"))
        print(f"{prog}: interrupted" + (f"; no report written, the finished cases are in {', '.join(unreported)}"
                                        if unreported else ""), file=sys.stderr)
        return EXIT_INTERRUPTED
    finally:
        answered[0] = True  # an exception other than Ctrl-C ends the command too
        _ANSWERING_CTRL_C = False
        for timer in resends:  # every resend sent (to `interrupt`, which now ignores it) or cancelled
            timer.cancel()
            timer.join()
        sys.unraisablehook = previous_hook
        signal.signal(signal.SIGINT, signal.SIG_IGN if program else previous_handler)


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
            resolve(spec, timeout=args.call_timeout)
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
            check_writable(out)
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
                   steps=args.steps, preset=args.preset, dtype=getattr(torch, args.dtype) if args.dtype else None,
                   call_timeout=args.call_timeout)
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
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - a user's cache or model may raise anything, exit too
        _discard_if_empty(out)
        kept = out / "results.json"
        what = (f"{exit_call(exc)} was called" if isinstance(exc, SystemExit) else
                str(exc) if isinstance(exc, CacheCallFailed) else f"{type(exc).__name__}: {exc}")
        fail(f"{prog}: error: the run failed midway: {what}; no report written"
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
    """Print a line of progress or summary, at once. Output piped into a reader that stopped
    (``| head``) is dropped by the command line (``harness.ReaderMayLeave``), and the run goes
    on to write its results and report."""
    print(line, flush=True)


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
