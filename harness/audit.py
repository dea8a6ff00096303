"""``python -m harness audit SPEC``: the scenario catalogue against any cache."""

from __future__ import annotations

from cache_impl import LEVELS, declared_level
from repro.scenarios import CATALOGUE, INCONCLUSIVE, fails_level, reached_level, run_scenario


def level_name(level: int) -> str:
    return LEVELS[level] if level >= 0 else "none (L0 contract broken)"


def first_failure(factory, level: int, tries: int = 3):
    """The first catalogue scenario at or below ``level`` that the cache fails, as
    ``(scenario, trial)``, or None when it reaches the level. A pass with some
    trials inconclusive (the allocator or CPython reused nothing) proves less, so
    the catalogue is run again, up to ``tries`` times."""
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


def audit(spec: str, factory, require: int, out=print) -> int:
    """Print the per-scenario table and the level reached; return the exit code:
    0 when the level meets ``require``, 1 otherwise."""
    results = []
    out(f"audit of {spec}" + (f" (declares {declared_level(factory)})" if declared_level(factory) else ""))
    out(f"{'scenario':30} {'level':5} {'outcome':12} {'hits':>9}  detail")
    for s in CATALOGUE:
        trial = run_scenario(s, factory)
        results.append((s, trial))
        lookups = trial.hits + trial.misses
        hits = f"{trial.hits}/{lookups}" if lookups else "-"
        mark = " !" if fails_level(s, trial) else ""
        out(f"{s.name:30} {LEVELS[s.level]:5} {trial.status + mark:12} {hits:>9}  {trial.detail}")
    level = reached_level(results)
    inconclusive = [s.name for s, t in results if t.status == INCONCLUSIVE]
    if inconclusive:
        out(f"inconclusive (not counted as passes): {', '.join(inconclusive)}")
    out(f"level reached: {level_name(level)}")
    if level >= require:
        return 0
    blocking = [s.name for s, t in results if fails_level(s, t) and s.level <= require]
    out(f"FAIL: {spec} does not reach {LEVELS[require]}: failed {', '.join(blocking)}")
    return 1
