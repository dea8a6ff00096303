"""Command line: ``python -m harness audit|compare|differential|hunt|report|sanitize|scan``."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from harness.interrupt import interrupted_is_one_line


def _program_name() -> str:
    """How the user called us: the console command, or ``python -m harness``."""
    called = Path(sys.argv[0]).name if sys.argv and sys.argv[0] else ""
    return "address-reuse" if called == "address-reuse" else "python -m harness"


# ``sanitize`` runs another command and parses its own options: it starts at once.
if sys.argv[1:2] == ["sanitize"] and Path(sys.argv[0]).name in ("address-reuse", "__main__.py"):
    from harness.sanitize.__main__ import main as sanitize
    sys.exit(sanitize(sys.argv[2:], f"{_program_name()} sanitize"))

# What the parser needs is light (no torch): ``--help`` and a usage error answer at once. What a
# command runs is imported once its options are parsed (``_run``).
from cache_impl import DESIGNS, LEVELS, Level  # noqa: E402 - after the sanitize fast path
from harness import OneLineParser, ReaderMayLeave  # noqa: E402
from harness.audit import DEFAULT_BUDGET, GENERATED  # noqa: E402
from harness.differential.command import add_arguments as add_differential_arguments  # noqa: E402
from harness.differential.command import add_hunt_arguments  # noqa: E402
from harness.environment import REPORTS  # noqa: E402
from harness.options import (DEFAULT_MODELS, EXIT_CONTAMINATED, EXIT_FAILED, EXIT_NOTHING_CONCLUSIVE,  # noqa: E402
                             EXIT_USAGE, add_run_options, level_argument, seconds_argument, seed_argument)
from harness.sanitize.command import DESCRIPTION as SANITIZE, add_arguments as add_sanitize_arguments  # noqa: E402
from harness.scan import add_arguments as add_scan_arguments  # noqa: E402
from repro.choices import CONTRACTS, DEFAULT_TIMEOUT, GRAD_MODES, SCENARIOS  # noqa: E402


INTERRUPTED = "130 on Ctrl-C (one line, nothing half-written)"


def build_parser() -> OneLineParser:
    parser = OneLineParser(
        prog=_program_name(),
        description="Prove whether a tensor-keyed cache can hand one request another's values.")
    sub = parser.add_subparsers(dest="command", required=True)
    specs = f"a registered design ({', '.join(DESIGNS)}) or package.module:attr"

    rp = sub.add_parser("repro", help="the main job: serve back-to-back requests through each cache design; a report",
                        description="Serve back-to-back fake requests through a video model (by default the toy "
                                    "Helios in every scenario, and the real Helios transformer, tiny, in the forced, "
                                    "natural and storage-swap scenarios) with each cache design, make the allocator "
                                    "recycle addresses, and compare every request with a cache-free run of the same "
                                    "prompt and seed. Writes results.json and a report (md, html, MP4s and GIFs, "
                                    "plots) into the output folder. Exit 0 when both are written, 2 for bad usage "
                                    "(nothing written), 4 when the run or its report fails midway (no report "
                                    f"written, reports/latest unchanged), {INTERRUPTED}.")
    rp.add_argument("--cache", nargs="+", metavar="SPEC", default=list(DESIGNS),
                    help="cache designs to run: registered names or package.module:attr "
                         f"(default: all of {', '.join(DESIGNS)})")
    add_run_options(rp, "how addresses come back between requests (default: all)")

    a = sub.add_parser("audit", help="audit one cache: the scenario catalogue, then probes and a generative search",
                       description="Run every scenario of the catalogue against SPEC as a serving "
                                   "pipeline runs it, then every obligation in situations that meet every pair "
                                   "of property values, then search for cases the catalogue does not list "
                                   "(sizes, dtypes, layouts, grad modes, every way a live source changes); "
                                   "print the safety level reached and the contract kept. Exit 0 when the "
                                   "level meets --require and the contract holds, 1 when not, 3 when the only "
                                   "failures are calls that did not return in time (no verdict), 2 for bad usage, "
                                   f"{INTERRUPTED}.")
    a.add_argument("spec", help=specs)
    a.add_argument("--require", type=level_argument, default=Level.L1,
                   help="the level the cache must reach for exit 0: L0-L3 (default: L1, the seed fix)")
    a.add_argument("--budget", type=seconds_argument, default=DEFAULT_BUDGET, metavar="SECONDS",
                   help=f"seconds for the probes, which always run to the end, and the generative search, "
                        f"which gets what is left (default {DEFAULT_BUDGET:g}; 0 skips both)")
    a.add_argument("--seed", type=seed_argument, default=0,
                   help="seed of the search: the same seed searches the same cases (default 0)")
    a.add_argument("--contract", choices=CONTRACTS, default="lru",
                   help="hygiene the cache promises beside safety: lru (LRU order, bound, dead entries dropped, "
                        "memory held; the seed's), bounded (all but LRU order) or none (default: lru)")
    a.add_argument("--grad-mode", choices=list(GRAD_MODES), default="no_grad",
                   help="grad mode around every call into the cache, as its pipeline runs it (default: no_grad)")
    a.add_argument("--call-timeout", type=seconds_argument, default=DEFAULT_TIMEOUT, metavar="SECONDS",
                   help=f"longest a single call into the cache may take (default {DEFAULT_TIMEOUT:g}; 0: no limit)")

    c = sub.add_parser("compare", help="before/after report for two caches; a CI gate",
                       description="Serve the pipeline scenarios up to the required level with BEFORE "
                                   "and AFTER and write the before/after report (reports/latest-compare "
                                   "points at it). Exit 0 when AFTER contaminated no request and had "
                                   "conclusive ones, 1 when it contaminated any, 2 for bad usage, 3 when no "
                                   "request of AFTER was conclusive, 4 when the run or its report failed "
                                   f"midway (no report written), {INTERRUPTED}.")
    c.add_argument("--before", required=True, metavar="SPEC", help=specs)
    c.add_argument("--after", required=True, metavar="SPEC", help=specs)
    c.add_argument("--require", type=level_argument, choices=LEVELS[1:], default=Level.L1,
                   help="run every pipeline scenario up to this level (default: L1, freed and reused "
                        "addresses: the seed's bug)")
    add_run_options(c, "pipeline scenarios to run (default: all up to --require)")

    sc = sub.add_parser("selfcheck", help="mutation kill rate, concurrency and memory of the designs",
                        description="Audit every hand-written broken variant of the hardened design (all must "
                                    "be killed) and N generated ones (one guard skipped under a random predicate; "
                                    "at least 95% must be killed), stress every design from several threads, and "
                                    "count what each holds after 1,000 requests. Exit 0 when every goal is met, 1 when "
                                    f"one is missed, 2 for bad usage, {INTERRUPTED}.")
    sc.add_argument("--generated", type=int, default=GENERATED, metavar="N",
                    help=f"generated mutants to audit (default {GENERATED}; 0: none)")
    sc.add_argument("--generated-seed", type=int, default=0, metavar="S", help="seed that draws them (default 0)")
    sub.add_parser("bench", help="measure lookup, put and end-to-end costs per design (reports/bench/)",
                   description="Measure every design side by side in one process and write "
                               "reports/bench/bench.json and bench.md. Exit 0 when they are written, "
                               f"2 for bad usage, {INTERRUPTED}.")

    add_scan_arguments(sub.add_parser(
        "scan", help="find caches keyed by a tensor's address in Python source (never imported)",
        description="Report every mapping keyed by a tensor's address or identity, functools cache over a "
                    "tensor and WeakKeyDictionary keyed by tensors, with the guards found and the level they "
                    "suggest. Exit 0 when nothing is found, 1 on findings, 2 for bad usage, a missing path or "
                    "nothing to read, 4 when a file could not be read or parsed (it is named; 5: findings as well), "
                    f"{INTERRUPTED}."))

    add_differential_arguments(sub.add_parser(
        "differential", help="does anything in a model's pipeline follow an address? (no cache knowledge needed)",
        description="Serve the same back-to-back requests, twice under an allocator that never hands a freed "
                    "address back, once under the normal one and once never-reuse with each request alone, "
                    "every run from a fresh process, and compare. Exit 0 "
                    "clean, 1 address-dependent, 3 inconclusive (no address was reused), 4 nondeterministic "
                    "(the never-reuse runs disagree), 5 carries state (a request differs served after others "
                    "and alone), 6 both address-dependent and carries state, 2 for bad usage or a missing "
                    f"never-reuse allocator, {INTERRUPTED}."))

    add_hunt_arguments(sub.add_parser(
        "hunt", help="drive a library's stateful places through the differential check; a report per finding",
        description="diffusers: enable each hook configuration the installed diffusers ships on a tiny diffusers "
                    "transformer that accepts it, serve requests back to back with no reset and with the documented "
                    "reset, and check each way; writes the table hook x model and, per finding, a folder upstream can "
                    "use. Another library (torch): scan its installed package for places worth driving, run each "
                    "workflow of repro/recipes that drives one, with no reset and with the reset, and list the "
                    "places no workflow drives. "
                    "Exit 0 no finding, 1 findings, 2 bad usage or nothing to hunt, 3 no finding but some cells could "
                    f"not be checked (the check failed, or the model differs from itself), {INTERRUPTED}."))

    s = sub.add_parser("sanitize", help="run any command with address and id keys tracked; report stale matches",
                       description=SANITIZE)
    add_sanitize_arguments(s)

    r = sub.add_parser("report", help="re-render a report from its results.json (no re-run)",
                       description="Re-render report.md, report.html, videos and plots from FOLDER/results.json. "
                                   "Exit 0 when it is written, 2 for bad usage (results.json missing or not in the results format), 4 when "
                                   f"the report cannot be written (nothing is written then), {INTERRUPTED}.")
    r.add_argument("folder", nargs="?", type=Path, default=REPORTS / "latest",
                   help="a run folder holding results.json (default: reports/latest)")
    parser.commands = sub.choices  # name -> its parser: a command's errors carry its own prefix
    return parser


def repro(parser, args) -> int:
    from harness.cli import execute, models_to_run, prepare_run
    models = models_to_run(args, args.scenario or list(SCENARIOS), DEFAULT_MODELS)
    plan, out, update_latest = prepare_run(parser, args, args.cache, models)
    execute(plan, out, update_latest, "Address-reuse report", parser.prog)
    return 0


def compare(parser, args) -> int:
    from harness.cli import execute, models_to_run, prepare_run, say
    from repro.serving import STRATEGIES
    scenarios = args.scenario or [name for name, s in STRATEGIES.items() if s.scenario.level <= args.require]
    if args.before == args.after:
        parser.error("--before and --after name the same cache")
    models = models_to_run(args, scenarios, {"toy": None})
    plan, out, update_latest = prepare_run(parser, args, [args.before, args.after], models)
    results = execute(plan, out, update_latest, f"Before {args.before} / after {args.after}",
                      parser.prog, kind="compare", pair={"before": args.before, "after": args.after})
    after = results.records_of(cache=args.after)
    bad = [r for r in after if r.contaminated]
    if bad:
        say(f"FAIL: after ({args.after}) contaminated {len(bad)} request(s):")
        for r in bad:
            say(f"  {r.model} {r.scenario} seed {r.seed} request {r.request} ({r.prompt!r}): "
                f"{r.false_hits}/{r.kv_lookups} K/V lookups returned another request's K/V, min SSIM {r.ssim_min:.2f}")
        return EXIT_CONTAMINATED
    proven = list(dict.fromkeys(f"{r.model} {r.scenario}" for r in after if r.conclusive))
    unproven = [f"{m} {s}" for m, s in results.rows() if f"{m} {s}" not in proven]
    if not proven:
        say(f"INCONCLUSIVE: no request of {args.after} had its address reused; nothing was proven")
        return EXIT_NOTHING_CONCLUSIVE
    conclusive = sum(r.conclusive for r in after)
    say(f"PASS: after ({args.after}) contaminated none of {conclusive} conclusive requests in {', '.join(proven)}"
        + (f"; inconclusive, not claimed: {', '.join(unproven)}" if unproven else ""))
    return 0


def report(parser, args) -> int:
    from harness.cli import say
    from harness.differential.check import rerender
    from harness.report.render import ReportError, ResultsError, write_report
    try:
        if not rerender(args.folder):  # a differential check's folder has a report of its own
            write_report(args.folder)
    except (ReportError, OSError) as exc:
        parser.exit(EXIT_FAILED, f"{parser.prog}: error: cannot write the report in {args.folder}: {exc}\n")
    except (ResultsError, ValueError) as exc:  # ValueError: a differential results file that is not whole
        parser.exit(EXIT_USAGE, f"{parser.prog}: error: {exc}\n")
    say(f"report: {args.folder / 'report.md'}  {args.folder / 'report.html'}")
    return 0


def main(argv=None) -> int:
    try:
        code = _main(argv)
    except SystemExit as exc:
        code = exc
    if argv is None:  # this process is the command: it ends here
        _leave_now(code)
    if isinstance(code, SystemExit):
        raise code
    return code


def _leave_now(code) -> None:
    """End the process without the interpreter's teardown. The command has answered and its
    files are whole; the teardown can only go wrong. A thread left running in user code (a
    call that did not return in time) is stopped there in the middle of torch's C++ code, and
    after a Ctrl-C during the audit's probes torch's state is torn down mid-use: both aborted
    the process after the command's own line ("terminate called without an active exception",
    exit 134; 9 of 20 Ctrl-Cs during the probes), or printed a ``StorageWeakRef.__del__`` traceback."""
    if isinstance(code, SystemExit):
        code = code.code
        if code is not None and not isinstance(code, int):  # as the interpreter does with sys.exit("text")
            print(code, file=sys.stderr)
            code = 1
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a reader that left, a closed stream: nothing more to say
            pass
    os._exit(code or 0)


def _main(argv) -> int:
    stdout = sys.stdout
    sys.stdout = ReaderMayLeave(stdout)  # `| head`: the command goes on quietly to its exit code
    try:
        parser = build_parser()
        args, unknown = parser.parse_known_args(argv)  # --help and usage errors end here, before torch
        command = parser.commands[args.command]
        if unknown:  # said by the command's own parser: one prefix, `python -m harness COMMAND: error:`
            command.error(f"unrecognized arguments: {' '.join(unknown)}")
        if args.command == "scan":
            # Reads source and writes nothing but its answer: no torch in this process, so the workers
            # it forks start small (importing torch for the run_command below cost the scan of torch
            # about 3 s of its 30).
            with interrupted_is_one_line(command.prog):
                return _run(command, args)
        with interrupted_is_one_line(command.prog):  # importing torch takes seconds: Ctrl-C there is one line too
            from harness.cli import run_command
        return run_command(command.prog, lambda: _run(command, args), program=argv is None)
    finally:
        sys.stdout = stdout


def _run(parser, args) -> int:
    """Run the parsed command; ``parser`` is its own, so that every error it reports starts
    with ``python -m harness COMMAND: error:``."""
    if args.command == "audit":
        from cache_impl import CacheSpecError, resolve
        from harness.audit.runner import AuditOptions, audit
        try:
            factory = resolve(args.spec, timeout=args.call_timeout)
        except CacheSpecError as exc:
            parser.error(str(exc))
        options = AuditOptions(require=args.require, contract=args.contract, grad_mode=args.grad_mode,
                               budget=args.budget, seed=args.seed, timeout=args.call_timeout)
        return audit(args.spec, factory, options)
    if args.command == "repro":
        return repro(parser, args)
    if args.command == "compare":
        return compare(parser, args)
    if args.command == "selfcheck":
        from harness.audit.selfcheck import main as selfcheck
        if not 0 <= args.generated <= 10_000 or not 0 <= args.generated_seed < 2**32:
            parser.error("--generated must be 0-10000 and --generated-seed 0 to 2**32 - 1")
        return selfcheck(args.generated, args.generated_seed)
    if args.command == "scan":
        from harness.scan import main as scan
        return scan(parser, args)
    if args.command == "differential":
        from harness.differential.check import main as differential
        return differential(parser, args)
    if args.command == "hunt":
        from harness.differential.hunt import main as hunt
        return hunt(parser, args)
    if args.command == "sanitize":
        from harness.sanitize.command import main as sanitize
        return sanitize(parser, args)
    if args.command == "bench":
        from harness.bench import run_bench
        run_bench()
        return 0
    return report(parser, args)


if __name__ == "__main__":
    sys.exit(main())
