"""``address-reuse hunt diffusers``: every hook configuration the installed diffusers
ships, enabled on a tiny diffusers transformer that accepts it, served back to back
as an engine serves it, through the differential check: once with no reset between
requests, once with the reset diffusers' pipelines do. One table, hook x model; per
finding a folder upstream can use (``harness.differential.upstream``).

A cell is one hook on one model. Its pipelines are the functions of
``repro.models.hunt_models``, checked by ``differential --call`` in fresh
processes, so a cell can be re-run by hand with the command its row names.
"""

from __future__ import annotations

import contextlib
import inspect
import io
import json
import os
import shutil
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from harness.differential import HUNT_REQUESTS, HUNT_SEEDS, LIBRARIES
from harness.differential.check import ADDRESS_DEPENDENT, BOTH, CARRIES_STATE, NONDETERMINISTIC, shared_processes
from harness.report.results import point_latest, write_atomic, write_json

FAILED = "failed"  # the differential check could not run
EXIT_FINDINGS, EXIT_UNCHECKED = 1, 3  # 0: every cell clean or not applicable
# What a cell can find. A check that could not run, or a model that differs from itself,
# says nothing about the hook: such a cell is unchecked, never a finding with a report.
FINDINGS = (CARRIES_STATE, ADDRESS_DEPENDENT, BOTH)
NOT_SERVED = "not served"  # the hook runs on this model, but another model carries its row


@dataclass
class Cell:
    hook: str
    model: str
    outcome: str  # clean / carries state / address-dependent / ... / not applicable / not served
    why: str = ""
    verdicts: dict = field(default_factory=dict)  # mode -> the differential check's verdict
    reasons: dict = field(default_factory=dict)  # mode -> its one-line reason
    commands: dict = field(default_factory=dict)  # mode -> the command that re-runs it
    places: list = field(default_factory=list)  # where the hook's state lives: "path:line: class"
    localised: list = field(default_factory=list)  # "path:line: message" where the runs part
    # "lookup path:line (key taken at path:line)", "read path:line (left at path:line ...)", or "the runs part at path:line"
    sites: list = field(default_factory=list)
    upstream: dict = field(default_factory=dict)  # the finding's folder and its script's two exit codes
    seconds: float = 0.0

    @property
    def finding(self) -> bool:
        return self.outcome in FINDINGS

    @property
    def unchecked(self) -> bool:
        return self.outcome in (FAILED, NONDETERMINISTIC)


def call_spec(model: str, hook: str, mode: str) -> str:
    return f"repro.models.hunt_models:{model}/{hook}/{mode}"


def hooks_installed(transformer) -> list[str]:
    """``path:line: Class on module`` for every diffusers hook on the transformer's modules."""
    places = {}
    for name, module in transformer.named_modules():
        registry = getattr(module, "_diffusers_hook", None)
        for hook in getattr(registry, "hooks", {}).values():
            cls = type(hook)
            key = cls.__qualname__
            if key not in places:
                try:
                    where = f"{inspect.getsourcefile(cls)}:{inspect.getsourcelines(cls)[1]}"
                except (OSError, TypeError):
                    where = cls.__module__
                places[key] = f"{where}: {key} (on {name or 'the transformer'}, and others like it)"
    return list(places.values())


def applicability(model: str, hook: str) -> tuple[str | None, list[str]]:
    """(why the hook cannot serve on this model, or None; where its hooks are) from one
    build and one request in this process."""
    from repro.models import hunt_models

    if hook in hunt_models.NOT_APPLICABLE:
        return hunt_models.NOT_APPLICABLE[hook], []
    if hook not in hunt_models.RECIPES:
        return "no recipe to enable it here: a configuration newer than this hunt knows", []
    try:
        namespace = hunt_models.build(model, hook)
    except Exception as exc:  # noqa: BLE001 - the library refuses this model: that is the answer
        return f"enabling it fails: {type(exc).__name__}: {_first_line(exc)}", []
    transformer = namespace["transformer"]
    places = hooks_installed(transformer)
    below_root = [m for name, m in transformer.named_modules() if name and getattr(m, "_diffusers_hook", None)
                  and m._diffusers_hook.hooks]
    if not below_root:
        return "it hooked no block of this model (its blocks are of another kind)", places
    try:
        hunt_models.generate(namespace, model, "probe", 0, reset=False)
    except Exception as exc:  # noqa: BLE001
        return f"a request fails with it enabled: {type(exc).__name__}: {_first_line(exc)}", places
    return None, places


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:200] if text else "(no message)"


def check(spec: str, out: Path, options: tuple = ()) -> tuple[str, str, float, list, list]:
    """Run ``differential --call spec`` (and ``options``) into ``out``: (verdict, reason, seconds,
    places named, the sites: each stale lookup the sanitizer named with where its key was taken, and
    each place where the traced runs part)."""
    from harness.differential.command import differential

    started = time.perf_counter()
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        code = differential(["--call", spec, "--seed", *HUNT_SEEDS, "--requests", HUNT_REQUESTS, *options,
                             "--out", str(out)])
    results_file = out / "results.json"
    if code == 2 or not results_file.exists():
        return FAILED, f"the check could not run (exit {code})", time.perf_counter() - started, [], []
    results = json.loads(results_file.read_text())
    places = [f"{f['axis']}: {f['place']}" for f in results.get("localised", [])]
    localised = results.get("localised", [])
    sites = [f"{_in_package(f['lookup'])} (key taken at {_in_package(f['key_taken'] or '?')})"
             for f in localised if f.get("lookup")]
    # state kept under a key that is no address, which the sanitizer does not watch: where an earlier
    # request left it and where the request read it, else where the traced runs part
    sites += [f"{_in_package(f['read'])} (left at {_in_package(f['left'])} by an earlier request)"
              for f in localised if f.get("read")]
    sites += [f"the runs part at {_in_package(d['path'])}:{d['line']}"
              + (f" and {_in_package(o['path'])}:{o['line']}" if (o := d.get("other")) else "")
              for f in localised if (d := f.get("divergence")) and not f.get("read")]
    return results["verdict"], results["reason"], time.perf_counter() - started, places, list(dict.fromkeys(sites))


def outcome(verdicts: dict) -> tuple[str, str]:
    """The cell's word and why, from the no-reset and reset verdicts."""
    no_reset, reset = verdicts.get("no-reset"), verdicts.get("reset")
    if no_reset not in FINDINGS:
        return no_reset, f"with reset: {reset}"
    return no_reset, f"with the reset per request: {reset}"


def run_cell(model: str, hook: str, out: Path, progress=print) -> Cell:
    """One hook on one model: applicable? then the check without and with the reset."""
    started = time.perf_counter()
    why, places = applicability(model, hook)
    if why:
        return Cell(hook, model, "not applicable", why, places=places, seconds=time.perf_counter() - started)
    cell = Cell(hook, model, "", places=places)
    for mode in ("no-reset", "reset"):
        spec = call_spec(model, hook, mode)
        cell.commands[mode] = f"address-reuse differential --call {spec} --seed {' '.join(HUNT_SEEDS)} " \
                              f"--requests {HUNT_REQUESTS}"
        verdict, reason, seconds, places, sites = check(spec, out / f"{model}-{hook}-{mode}")
        cell.verdicts[mode], cell.reasons[mode] = verdict, reason
        if mode == "no-reset":
            cell.localised, cell.sites = places, sites
        progress(f"  {hook} on {model}, {mode}: {verdict} ({seconds:.0f}s)")
    cell.outcome, cell.why = outcome(cell.verdicts)
    cell.seconds = time.perf_counter() - started
    return cell


def plan_cells(models: list[str] | None = None) -> list[tuple[str, list[str]]]:
    """(hook, models to try in order) for every hook the installed diffusers ships."""
    from repro.models import hunt_models
    return [(hook, list(models or hunt_models.MODELS)) for hook in hunt_models.hook_names()]


def hunt_hook(hook: str, models: list[str], out: Path, every_model: bool, progress=print) -> list[Cell]:
    """The hook on the first model that accepts it (or on every one): its row of the table."""
    cells, served = [], False
    with shared_processes():  # one set of warm processes for the row's checks: their imports once
        for model in models:
            if served and not every_model:
                why, places = applicability(model, hook)
                cells.append(Cell(hook, model, "not applicable", why, places=places) if why else
                             Cell(hook, model, NOT_SERVED, "served on the row's first model (--every-model serves "
                                                           "each)", places=places))
                continue
            cell = run_cell(model, hook, out / "cells", progress)
            served = served or cell.outcome != "not applicable"
            cells.append(cell)
    return cells


def table_markdown(cells: list[Cell], models: list[str]) -> str:
    rows = {}
    for c in cells:
        rows.setdefault(c.hook, {})[c.model] = c
    lines = ["| hook | " + " | ".join(models) + " |", "|---|" + "---|" * len(models)]
    for hook, by_model in rows.items():
        lines.append(f"| {hook} | " + " | ".join(_cell_text(by_model.get(m)) for m in models) + " |")
    return "\n".join(lines) + "\n"


def _cell_text(c: Cell | None) -> str:
    if c is None:
        return "-"
    if c.outcome in ("not applicable", NOT_SERVED):
        return f"{c.outcome} ({c.why})".replace("|", "/")
    if not c.finding:
        return f"{c.outcome}; {c.why}"
    return f"**{c.outcome}** at {'; '.join(c.sites) or 'no place named'}; {c.why}".replace("|", "/")


def main(parser, args) -> int:
    if args.library not in LIBRARIES:
        parser.error(f"nothing to hunt in {args.library!r}: the hunt knows {', '.join(LIBRARIES)}")
    if args.library != "diffusers":
        if args.model or args.hook or args.every_model:
            parser.error("--model, --hook and --every-model choose diffusers hooks and models; "
                         f"a hunt in {args.library} runs its recipes")
        from repro.recipes import load
        try:
            module = load(args.library)
        except ModuleNotFoundError as exc:  # the library, or one it needs
            parser.error(f"cannot import {args.library} ({exc}): pip install '{exc.name or args.library}' "
                         "(the harness's 'hunt' extra installs every library it hunts)")
        except LookupError as exc:  # repro.recipes.place: this release lacks the code a recipe drives
            parser.error(f"the {args.library} recipes do not fit the installed release: {_first_line(exc)}")
        except Exception as exc:  # noqa: BLE001 - installed, but its import fails (a dependency of another release)
            parser.error(f"cannot import {args.library}: it is installed, but importing it raised "
                         f"{type(exc).__name__}: {_first_line(exc)}")
        return _in_new_folder(args, lambda out: hunt_library(module, out, args.out is None))
    from repro.models import hunt_models  # first: it keeps what diffusers imports off any model hub
    try:
        import diffusers
    except ImportError as exc:
        from repro.models import DIFFUSERS_RANGE
        parser.error(f"cannot import diffusers ({exc}): pip install 'diffusers{DIFFUSERS_RANGE}' "
                     f"(make test and make repro do, in .venv)")
    models = args.model or list(hunt_models.MODELS)
    unknown = [m for m in models if m not in hunt_models.MODELS]
    if unknown:
        parser.error(f"unknown hunt model {unknown[0]!r}: choose {', '.join(hunt_models.MODELS)}")
    hooks = plan_cells(models)
    if args.hook:
        known = {h for h, _ in hooks}
        if set(args.hook) - known:
            parser.error(f"diffusers {diffusers.__version__} ships no hook configuration "
                         f"{sorted(set(args.hook) - known)[0]!r}: choose from {', '.join(sorted(known))}")
        hooks = [(h, ms) for h, ms in hooks if h in args.hook]
    def hunt(out):
        print(f"hunting diffusers {diffusers.__version__}: {len(hooks)} hook configurations x models "
              f"{', '.join(models)}; results in {out}", flush=True)
        return _hunt(args, diffusers.__version__, models, hooks, out)
    return _in_new_folder(args, hunt)


def _in_new_folder(args, hunt) -> int:
    """``hunt(out)`` into ``--out`` or a new run folder; on Ctrl-C a folder it made without its
    table is removed: cells without their table are no result."""
    from harness.run import new_run_dir

    created = args.out is None or not args.out.exists()
    out = args.out or new_run_dir()
    out.mkdir(parents=True, exist_ok=True)
    try:
        return hunt(out)
    except KeyboardInterrupt:
        if created and not (out / "table.md").exists():
            shutil.rmtree(out, ignore_errors=True)
        raise


def _hunt(args, version: str, models: list[str], hooks: list, out: Path) -> int:
    from harness.differential.upstream import write_upstream

    started, cells = time.perf_counter(), []
    for i, (hook, ms) in enumerate(hooks, 1):
        print(f"[{i}/{len(hooks)}] {hook}", flush=True)
        cells += hunt_hook(hook, ms, out, args.every_model)
    findings = [c for c in cells if c.finding]
    for c in findings:
        folder = write_upstream(c, out / "upstream" / f"{c.model}-{c.hook}")
        print(f"  upstream report: {folder}", flush=True)
    results = {"kind": "hunt", "library": "diffusers", "version": version, "models": models,
               "cells": [asdict(c) for c in cells], "seconds": round(time.perf_counter() - started, 1)}
    return _finish(out, results, cells, table_markdown(cells, models) + "\n", point=args.out is None)


def _finish(out: Path, results: dict, cells: list[Cell], table: str, point: bool) -> int:
    """Write the hunt's results.json and table.md, print the table and the tally; the exit code."""
    write_json(out / "results.json", results)
    write_atomic(out / "table.md", f"# Hunt: {results['library']} {results['version']}\n\n{table}".encode())
    if point:
        point_latest(out, kind="hunt")
    print(table)
    findings, unchecked = [c for c in cells if c.finding], [c for c in cells if c.unchecked]
    print(f"{len(findings)} finding(s)" + (f", {len(unchecked)} cell(s) could not be checked" if unchecked else "")
          + f"; {results['seconds']}s; table: {out / 'table.md'}")
    return EXIT_FINDINGS if findings else EXIT_UNCHECKED if unchecked else 0


# --- a library's workflows (repro.recipes) ----------------------------------------------------


def proposed_places(library: str, parts: tuple[str, ...]) -> list[str]:
    """``path:line: message`` for each place ``scan`` finds in the installed library's ``parts``
    (its subpackages): what is worth driving (not what it judged safe, nor what is suppressed)."""
    import importlib

    from harness.scan.runner import scan_paths

    root = Path(importlib.import_module(library).__file__).parent
    found = scan_paths([str(root / part) for part in parts if (root / part).exists()])
    return [f"{Path(f.path).relative_to(root)}:{f.line}: {f.message}" for f in found.findings if f.counts]


def hunt_library(module, out: Path, point: bool) -> int:
    """Each recipe of a library's recipe module (``repro.recipes``) through the differential check,
    with no reset, with the reset and with the fix; the places ``scan`` proposes, each with the
    recipe that drives it or said to have none."""
    from importlib.metadata import version

    from harness.differential.upstream import write_library_upstream
    from repro.recipes import FIXED, MODES

    library, started = module.LIBRARY, time.perf_counter()
    found_version = version(library)
    print(f"hunting {library} {found_version}: scanning {', '.join(module.SCAN)} for places to drive", flush=True)
    places = proposed_places(library, module.SCAN)
    driven = tuple(f"{place}:" for recipe in module.RECIPES for place in recipe.drives)  # "path:line: message"
    read = {place for recipe in module.RECIPES for place in recipe.drives  # driven, though scan does not propose it
            if not any(p.startswith(f"{place}:") for p in places)}
    print(f"  {len(places)} place(s) proposed; {len(module.RECIPES)} recipe(s); results in {out}", flush=True)
    prompts = out / "prompts.txt"
    prompts.write_text("\n".join(module.PROMPTS) + "\n")
    options = ("--prompts", str(prompts))
    cells = []
    with shared_processes():
        for i, recipe in enumerate(module.RECIPES, 1):
            print(f"[{i}/{len(module.RECIPES)}] {recipe.__name__} (drives {', '.join(recipe.drives)})", flush=True)
            cell = Cell(recipe.__name__, library, "", places=[f"{p} (read in the source; scan does not propose it)"
                                                               if p in read else p for p in recipe.drives])
            cell_started = time.perf_counter()
            for mode in (*MODES, FIXED) if recipe.fix else MODES:
                spec = f"{module.__name__}:{recipe.__name__}/{mode}"
                cell.commands[mode] = (f"address-reuse differential --call {spec} --prompts PROMPTS --seed "
                                       f"{' '.join(HUNT_SEEDS)} --requests {HUNT_REQUESTS}")
                verdict, reason, seconds, named, sites = check(spec, out / "cells" / f"{recipe.__name__}-{mode}",
                                                                options)
                cell.verdicts[mode], cell.reasons[mode] = verdict, reason
                if mode == "no-reset":
                    cell.localised, cell.sites = named, sites
                print(f"  {recipe.__name__}, {mode}: {verdict} ({seconds:.0f}s)", flush=True)
            cell.outcome, cell.why = outcome(cell.verdicts)
            if cell.finding:
                folder = write_library_upstream(cell, module, recipe, found_version,
                                                out / "upstream" / recipe.__name__)
                print(f"  upstream report: {folder} (the script exits {cell.upstream['buggy_exit']} as shipped, "
                      f"{cell.upstream['fixed_exit']} with --fix)", flush=True)
            cell.seconds = time.perf_counter() - cell_started
            cells.append(cell)
    unreachable = {p: why for p in places for at, why in getattr(module, "UNREACHABLE", {}).items()
                   if p.startswith(f"{at}:")}
    undriven = [p for p in places if not p.startswith(driven) and p not in unreachable]
    results = {"kind": "hunt", "library": library, "version": found_version, "proposed": places,
               "undriven": undriven, "unreachable": unreachable, "cells": [asdict(c) for c in cells],
               "seconds": round(time.perf_counter() - started, 1)}
    return _finish(out, results, cells, library_table(cells, places, undriven, unreachable), point)


def library_table(cells: list[Cell], proposed: list[str], undriven: list[str], unreachable: dict) -> str:
    lines = ["| recipe | drives | no reset | with the reset | with the fix | where | script |",
             "|---|---|---|---|---|---|---|"]
    for c in cells:
        verdict = f"**{c.outcome}**" if c.finding else c.outcome
        named = "; ".join(c.sites)
        if c.finding and not named:
            named = "not named: the sanitizer's runs met no stale key this time"
        elif named and not c.finding:  # stale keys met, and no result changed by them
            named = f"stale lookups seen, no result changed: {named}"
        script = (f"exits {c.upstream['buggy_exit']}, {c.upstream['fixed_exit']} with --fix" if c.upstream else "-")
        lines.append(f"| {c.hook} | {', '.join(c.places)} | {verdict} | {c.verdicts.get('reset', '-')} | "
                     f"{c.verdicts.get('fixed', '-')} | {named or '-'} | {script} |")
    lines += ["", "Places scan proposes that no recipe drives:" if undriven else
              "Every place scan proposes that can be reached here is driven." if proposed else
              "scan proposes no place here: the recipes drive places read in the source.", *[f"- {p}" for p in undriven]]
    if unreachable:
        lines += ["", "Places scan proposes that cannot be reached on this machine:",
                  *[f"- {p} (why: {why})" for p, why in unreachable.items()]]
    return "\n".join(lines) + "\n"


def _in_package(path: str) -> str:
    """A path as the package names it (from after ``site-packages/``), or as this checkout does."""
    if "site-packages/" in path:
        return path.rsplit("site-packages/", 1)[-1]
    return os.path.relpath(path) if os.path.isabs(path) and path.startswith(os.getcwd()) else path
