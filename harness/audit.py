"""``python -m harness audit SPEC``: the scenario catalogue, then a generative
search, against any cache."""

from __future__ import annotations

import time

from cache_impl import Level, declared_level, level_below
from harness.search import search
from repro.scenarios import CATALOGUE, INCONCLUSIVE, fails_level, reached_level, run_scenario

DEFAULT_BUDGET = 30.0  # seconds of search: with the catalogue, an audit stays under a minute on 2 cores


def level_name(level: Level | None) -> str:
    return str(level) if level is not None else "none (L0 failed)"


def catalogue_failure(factory, level: Level, tries: int = 3):
    """The first catalogue scenario at or below ``level`` that the cache fails, as
    ``(scenario, trial)``, or None. A pass with some trials inconclusive (the
    allocator or CPython reused nothing) proves less, so the catalogue is run
    again, up to ``tries`` times."""
    for _ in range(tries):
        inconclusive = False
        for s in CATALOGUE:
            if s.level <= level:
                trial = run_scenario(s, factory)
                if fails_level(s, trial):
                    return s, trial
                inconclusive |= trial.status == INCONCLUSIVE
        if not inconclusive:
            break
    return None


def first_failure(factory, level: Level, spec: str = "", budget: float = DEFAULT_BUDGET, seed: int = 0) -> str | None:
    """What keeps the cache from ``level``, as the audit finds it (catalogue, then
    search), in one line; None when nothing does."""
    found = catalogue_failure(factory, level)
    if found is not None:
        return f"{found[0].name} ({found[1].status})"
    failure = search(spec or getattr(factory, "__name__", "cache"), factory, level, budget, seed)
    if failure is not None:
        return f"search at {failure.level}, seed {failure.seed}: {failure.message}"
    return None


def audit(spec: str, factory, require: Level, out=print, budget: float = DEFAULT_BUDGET, seed: int = 0) -> int:
    """Print the per-scenario table, the search's findings and the level reached;
    return the exit code: 0 when the level meets ``require``, 1 otherwise."""
    results = []
    out(f"audit of {spec}" + (f" (declares {declared_level(factory)})" if declared_level(factory) else ""))
    out(f"{'scenario':32} {'level':5} {'outcome':12} {'hits':>9}  detail")
    for s in CATALOGUE:
        trial = run_scenario(s, factory)
        results.append((s, trial))
        lookups = trial.hits + trial.misses
        hits = f"{trial.hits}/{lookups}" if lookups else "-"
        mark = " !" if fails_level(s, trial) else ""
        out(f"{s.name:32} {str(s.level):5} {trial.status + mark:12} {hits:>9}  {trial.detail}")
    level = reached_level(results)
    inconclusive = [s.name for s, t in results if t.status == INCONCLUSIVE]
    if inconclusive:
        out(f"inconclusive (not counted as passes): {', '.join(inconclusive)}")
    out(f"catalogue: level {level_name(level)}")
    level, found = search_below(spec, factory, level, budget, seed, out)
    out(f"level reached: {level_name(level)}")
    if level is not None and level >= require:
        return 0
    blocking = [s.name for s, t in results if fails_level(s, t) and s.level <= require]
    blocking += [f"search ({f.level}: {f.message})" for f in found if f.level <= require]
    out(f"FAIL: {spec} does not reach {require}: failed {'; '.join(blocking)}")
    return 1


def search_below(spec, factory, level, budget, seed, out):
    """Search at ``level``; on a failure, the level drops below the failure's and
    the search goes on there with the budget left. Returns (level, failures)."""
    found = []
    deadline = time.monotonic() + budget
    while level is not None and time.monotonic() < deadline:
        started = time.monotonic()
        out(f"search: steps up to {level}, {deadline - started:.0f} s left, --seed {seed} ...")
        failure = search(spec, factory, level, deadline - started, seed)
        if failure is None:
            out(f"search: no failure in {time.monotonic() - started:.1f} s")
            break
        found.append(failure)
        out(f"search FAILED at {failure.level} (found with --seed {failure.seed}): {failure.message}\n"
            f"reproduce with:\n\n{failure.snippet}")
        level = level_below([failure.level])
    return level, found
