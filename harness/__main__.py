"""Command line: ``python -m harness audit|compare|differential|hunt|report|sanitize|scan``."""

from __future__ import annotations

import sys
from pathlib import Path

from harness.interrupt import interrupted_is_one_line


def _program_name() -> str:
    """How the user called us: the console command, or ``python -m harness``."""
    called = Path(sys.argv[0]).name if sys.argv and sys.argv[0] else ""
    return "address-reuse" if called == "address-reuse" else "python -m harness"


# ``sanitize`` runs another command and needs none of the imports below (torch): it starts at once.
if sys.argv[1:2] == ["sanitize"] and Path(sys.argv[0]).name in ("address-reuse", "__main__.py"):
    from harness.sanitize.__main__ import main as sanitize
    sys.exit(sanitize(sys.argv[2:], f"{_program_name()} sanitize"))

with interrupted_is_one_line(_program_name()):  # importing torch takes seconds: Ctrl-C there is one line too
    from cache_impl import DESIGNS, LEVELS, CacheSpecError, Level, resolve
    from harness.audit.runner import DEFAULT_BUDGET, AuditOptions, audit
    from harness.cli import (EXIT_CONTAMINATED, EXIT_FAILED, EXIT_NOTHING_CONCLUSIVE, EXIT_USAGE, STRATEGIES,
                             OneLineParser, add_run_options, execute, level_argument, models_to_run, prepare_run,
                             run_command, say, seconds_argument, seed_argument)
    from harness.run import REPORTS
    from harness.scan import add_arguments as add_scan_arguments
    from harness.audit.selfcheck import GENERATED
    from repro.guard import DEFAULT_TIMEOUT, GRAD_MODES
    from repro.scenarios import CONTRACTS


def build_parser() -> OneLineParser:
    parser = OneLineParser(
        prog=_program_name(),
        description="Prove whether a tensor-keyed cache can hand one request another's values.")
    sub = parser.add_subparsers(dest="command", required=True)
    specs = f"a registered design ({', '.join(DESIGNS)}) or package.module:attr"

    a = sub.add_parser("audit", help="audit one cache: the scenario catalogue, then probes and a generative search",
                       description="Run every scenario of the catalogue against SPEC as a serving "
                                   "pipeline runs it, then every obligation in situations that meet every pair "
                                   "of property values, then search for cases the catalogue does not list "
                                   "(sizes, dtypes, layouts, grad modes, every way a live source changes); "
                                   "print the safety level reached and the contract kept. Exit 0 when the "
                                   "level meets --require and the contract holds, 1 when not, 2 for bad usage.")
    a.add_argument("spec", help=specs)
    a.add_argument("--require", type=level_argument, default=Level.L1,
                   help="the level the cache must reach for exit 0: L0-L3 (default: L1, the seed fix)")
    a.add_argument("--budget", type=seconds_argument, default=DEFAULT_BUDGET, metavar="SECONDS",
                   help=f"seconds of probes and generative search after the catalogue "
                        f"(default {DEFAULT_BUDGET:g}; 0 skips them)")
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
                                   "midway (no report written).")
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
                                    "count what each holds after 1,000 requests. Exit 1 when a goal is missed.")
    sc.add_argument("--generated", type=int, default=GENERATED, metavar="N",
                    help=f"generated mutants to audit (default {GENERATED}; 0: none)")
    sc.add_argument("--generated-seed", type=int, default=0, metavar="S", help="seed that draws them (default 0)")
    sub.add_parser("bench", help="measure lookup, put and end-to-end costs per design (reports/bench/)",
                   description="Measure every design side by side in one process and write "
                               "reports/bench/bench.json and bench.md.")

    add_scan_arguments(sub.add_parser(
        "scan", help="find caches keyed by a tensor's address in Python source (never imported)",
        description="Report every mapping keyed by a tensor's address or identity, functools cache over a "
                    "tensor and WeakKeyDictionary keyed by tensors, with the guards found and the level they "
                    "suggest. Exit 0 when nothing is found, 1 on findings, 2 for bad usage or an "
                    "unreadable path."))

    from harness.differential.check import add_arguments as add_differential_arguments
    add_differential_arguments(sub.add_parser(
        "differential", help="does anything in a model's pipeline follow an address? (no cache knowledge needed)",
        description="Serve the same back-to-back requests, twice under an allocator that never hands a freed "
                    "address back, once under the normal one and once never-reuse with each request alone, "
                    "every run from a fresh process, and compare. Exit 0 "
                    "clean, 1 address-dependent, 3 inconclusive (no address was reused), 4 nondeterministic "
                    "(the never-reuse runs disagree), 2 for bad usage or a missing never-reuse allocator."))

    from harness.differential.hunt import add_arguments as add_hunt_arguments
    add_hunt_arguments(sub.add_parser(
        "hunt", help="every hook configuration a library ships, through the differential check; a report per finding",
        description="Enable each hook configuration the installed diffusers ships on a tiny diffusers transformer "
                    "that accepts it, serve requests back to back with no reset and with the documented reset, and "
                    "check each way. Writes the table hook x model and, per finding, a folder upstream can use. "
                    "Exit 0 no finding, 1 findings, 2 bad usage or nothing to hunt, 3 no finding but some cells could "
                    "not be checked (the check failed, or the model differs from itself)."))

    from harness.sanitize.command import DESCRIPTION as SANITIZE, add_arguments as add_sanitize_arguments
    s = sub.add_parser("sanitize", help="run any command with address and id keys tracked; report stale matches",
                       description=SANITIZE)
    add_sanitize_arguments(s)
    parser.sanitize = s  # its usage errors carry its prefix

    r = sub.add_parser("report", help="re-render a report from its results.json (no re-run)",
                       description="Re-render report.md, report.html, videos and plots from FOLDER/results.json. "
                                   "Exit 2 when results.json is missing or not in the results format, 4 when "
                                   "the report cannot be written (nothing is written then).")
    r.add_argument("folder", nargs="?", type=Path, default=REPORTS / "latest",
                   help="a run folder holding results.json (default: reports/latest)")
    parser.report = r  # report errors carry its prefix, as the other commands' do
    return parser


def compare(parser, args) -> int:
    scenarios = args.scenario or [name for name, s in STRATEGIES.items() if s.scenario.level <= args.require]
    if args.before == args.after:
        parser.error("--before and --after name the same cache")
    models = models_to_run(args, scenarios, {"toy": None})
    plan, out, update_latest = prepare_run(parser, args, [args.before, args.after], models)
    results = execute(plan, out, update_latest, f"Before {args.before} / after {args.after}",
                      f"{parser.prog} compare", kind="compare", pair={"before": args.before, "after": args.after})
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
    def command() -> int:
        parser = build_parser()  # inside: it imports the differential check and the hunt
        return _run(parser, parser.parse_args(argv))

    return run_command(_program_name(), command)


def _run(parser, args) -> int:
    if args.command == "audit":
        try:
            factory = resolve(args.spec, timeout=args.call_timeout)
        except CacheSpecError as exc:
            parser.error(str(exc))
        options = AuditOptions(require=args.require, contract=args.contract, grad_mode=args.grad_mode,
                               budget=args.budget, seed=args.seed, timeout=args.call_timeout)
        return audit(args.spec, factory, options)
    if args.command == "compare":
        return compare(parser, args)
    if args.command == "selfcheck":
        from harness.audit.selfcheck import main as selfcheck
        if not 0 <= args.generated <= 10_000 or not 0 <= args.generated_seed < 2**32:
            parser.error("--generated must be 0-10000 and --generated-seed 0 to 2**32 - 1")
        return selfcheck(args.generated, args.generated_seed)
    if args.command == "scan":
        from harness.scan import main as scan
        return scan(args)
    if args.command == "differential":
        from harness.differential.check import main as differential
        return differential(parser, args)
    if args.command == "hunt":
        from harness.differential.hunt import main as hunt
        return hunt(args)
    if args.command == "sanitize":
        from harness.sanitize.command import main as sanitize
        return sanitize(parser.sanitize, args)
    if args.command == "bench":
        from harness.bench import run_bench
        run_bench()
        return 0
    return report(parser.report, args)


if __name__ == "__main__":
    sys.exit(main())
