"""``python -m harness audit SPEC``: the scenario catalogue, then the probes (every
obligation in situations that meet every pair of property values) and a generative
search, against any cache, as its pipeline runs it.

The level is a *safety* statement (no value from other data, no source kept
alive); the contract (LRU order, the bound, dropping dead entries, memory held)
is hygiene, judged beside it and only as far as ``--contract`` asks.
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass, field

import torch

from cache_impl import Level, declared_level, describe_spec, level_below
from harness.audit import DEFAULT_BUDGET
from harness.audit.probes import find_failure
from harness.audit.dtypes import DTYPES
from repro.guard import DEFAULT_TIMEOUT, HUNG, CacheCallFailed, guarded, is_hang
from repro.scenarios import (BROKEN, CATALOGUE, FALSE_HIT, INCONCLUSIVE, PASS, SHAPE, WRONG_MISS, Trial,
                             applies, fails_contract, fails_level, reached_level, run_scenario)

CATALOGUE_DTYPES = ("float32", "bfloat16", "float16")  # what real models' text encoders hand the cache
PROBED_DTYPES = DTYPES  # every dtype the search makes sources of
WORST_FIRST = (FALSE_HIT, BROKEN, WRONG_MISS, PASS, INCONCLUSIVE)


@dataclass
class AuditOptions:
    require: Level = Level.L1
    contract: str = "lru"
    grad_mode: str = "no_grad"
    budget: float = DEFAULT_BUDGET
    seed: int = 0
    timeout: float = DEFAULT_TIMEOUT
    dtypes: tuple = CATALOGUE_DTYPES


@dataclass
class AuditResult:
    level: Level | None
    broken: list = field(default_factory=list)  # the contract's failures, hangs apart
    rows: list = field(default_factory=list)  # (scenario, combined trial)
    unsupported: dict = field(default_factory=dict)  # dtype name -> why
    search_failures: list = field(default_factory=list)
    hung: str | None = None  # the first call that did not return in time: no verdict on what it hid

    @property
    def contract_kept(self) -> bool:
        return not self.broken


EXIT_HUNG = 3  # a call did not return in time and nothing else failed: no verdict either way


def level_name(level: Level | None) -> str:
    return str(level) if level is not None else "none (L0 failed)"


@contextlib.contextmanager
def default_dtype(name: str):
    """Sources made by the scenarios are of this dtype while the body runs."""
    before = torch.get_default_dtype()
    torch.set_default_dtype(getattr(torch, name))
    try:
        yield
    finally:
        torch.set_default_dtype(before)


def unsupported_dtypes(factory, options: AuditOptions) -> dict[str, str]:
    """The dtypes the cache refuses for a plain source (it raises), with why. A
    cache may support only some (TensorAsKey asserts float32): it is judged on the
    ones it supports, and the rest are named. A cache that fails on every
    catalogue dtype, or exits or hangs, supports nothing less: it is judged on all."""
    refused = {}
    for name in PROBED_DTYPES:
        dtype = getattr(torch, name)
        source = (torch.randn(SHAPE).to(dtype) if dtype.is_floating_point or dtype.is_complex
                  else torch.randint(0, 2 if dtype is torch.bool else 100, SHAPE).to(dtype))
        try:
            cache = guarded(factory, timeout=options.timeout, grad_mode=options.grad_mode)(max_size=2)
            cache.put(source, torch.ones(1))  # float8 has no arithmetic on CPU: any value will do
            cache.get(source)
        except CacheCallFailed as exc:
            if not exc.raised:
                return {}
            refused[name] = str(exc)
    if all(name in refused for name in options.dtypes):
        return {}
    return refused


def run_catalogue(factory, options: AuditOptions, unsupported: dict) -> list[tuple]:
    """Every scenario in every supported catalogue dtype, one combined trial each:
    the worst outcome, naming the dtypes it happened in."""
    return [(s, run_in_every_dtype(s, factory, options, unsupported)) for s in CATALOGUE]


def run_in_every_dtype(s, factory, options: AuditOptions, unsupported: dict) -> Trial:
    """One scenario in each supported catalogue dtype, combined into one trial."""
    skip = frozenset(getattr(torch, name) for name in unsupported)
    trials = {}
    for name in options.dtypes:
        if name not in unsupported:
            with default_dtype(name):
                trials[name] = run_scenario(s, factory, options.grad_mode, options.timeout, skip)
    return combine(trials)


def combine(trials: dict) -> Trial:
    """One trial from one per dtype: the worst status; when not every dtype shares
    it, the detail says which did."""
    if not trials:
        return Trial(INCONCLUSIVE, "not tested: no supported dtype")
    worst = min(trials.values(), key=lambda t: WORST_FIRST.index(t.status))
    where = [name for name, t in trials.items() if t.status == worst.status]
    failed = worst.status in (FALSE_HIT, BROKEN, WRONG_MISS)
    detail = f"[{', '.join(where)}] {worst.detail}" if failed and len(where) < len(trials) else worst.detail
    return Trial(worst.status, detail.strip(), address_reused=worst.address_reused, evidence=worst.evidence,
                 hits=sum(t.hits for t in trials.values()), misses=sum(t.misses for t in trials.values()))


def catalogue_failure(factory, level: Level, contract: str = "lru", tries: int = 3):
    """The first scenario the cache fails (in float32, no_grad): a safety scenario
    at or below ``level``, or a hygiene check ``contract`` asks for; as
    ``(scenario, trial)``, or None. A pass with some trials inconclusive (the
    allocator or CPython reused nothing) proves less, so the catalogue is run
    again, up to ``tries`` times."""
    for _ in range(tries):
        inconclusive = False
        for s in CATALOGUE:
            if (s.contract is None and s.level <= level) or applies(s, contract):
                trial = run_scenario(s, factory)
                if fails_level(s, trial) or fails_contract(s, trial, contract):
                    return s, trial
                inconclusive |= trial.status == INCONCLUSIVE
        if not inconclusive:
            break
    return None


def first_failure(factory, level: Level, spec: str = "", budget: float = DEFAULT_BUDGET, seed: int = 0,
                  contract: str = "lru") -> str | None:
    """What keeps the cache from ``level`` or breaks ``contract``, as the audit finds
    it (catalogue, then probes and search), in one line; None when nothing does."""
    found = catalogue_failure(factory, level, contract)
    if found is not None:
        return f"{found[0].name} ({found[1].status})"
    failure = find_failure(spec or getattr(factory, "__name__", "cache"), factory, level, budget, seed,
                           contract=contract)
    if failure is not None:
        where = "the contract" if failure.contract else failure.level
        return f"{failure.phase} at {where}, {failure.found_by}: {failure.message}"
    return None


def run_audit(spec: str, factory, options: AuditOptions, out=print) -> AuditResult:
    """Catalogue, then probes and search; print as it goes; return what was found."""
    with contextlib.suppress(TypeError):  # a factory that hung in an earlier audit of this process
        HUNG.pop(factory, None)
    about = describe_spec(spec, factory)
    out(f"audit of {spec}" + (f" (declares {declared_level(factory)})" if declared_level(factory) else ""))
    out(f"tested: {about['file'] or 'no source file'}" + (f", sha256 {about['sha256'][:16]}" if about["sha256"] else "")
        + (f", {about['package_version']}" if about["package_version"] else ""))
    out(f"run as a pipeline runs it: grad mode {options.grad_mode}, catalogue sources in "
        f"{', '.join(options.dtypes)}, {options.timeout:g} s per call; contract: {options.contract}")
    unsupported = unsupported_dtypes(factory, options)
    for name, why in unsupported.items():
        out(f"unsupported dtype {name}: {why} (judged on the others)")
    rows = run_catalogue(factory, options, unsupported)
    out(f"\n{'safety':35} {'level':5} {'outcome':12} {'hits':>9}  detail")
    for s, trial in rows:
        if s.contract is None:
            out(_row(s, trial, fails_level(s, trial)))
    out(f"\n{'hygiene (contract ' + options.contract + ')':35} {'asks':5} {'outcome':12} {'hits':>9}  detail")
    for s, trial in rows:
        if s.contract is not None:
            asks = "yes" if applies(s, options.contract) else "no"
            out(_row(s, trial, fails_contract(s, trial, options.contract), asks))
    robustness_table(rows, out)
    inconclusive = [s.name for s, t in rows if t.status == INCONCLUSIVE]
    if inconclusive:
        out(f"inconclusive (not counted as passes): {', '.join(inconclusive)}")
    lookups = sum(t.hits + t.misses for _, t in rows)
    if lookups and not sum(t.hits for _, t in rows):
        out(f"hint: the cache never hit in {lookups} lookups; if it switches itself off in grad mode "
            f"{options.grad_mode}, try --grad-mode with the mode its pipeline runs in")
    level = reached_level(rows)
    out(f"catalogue: level {level_name(level)}")
    level, found = search_below(spec, factory, level, options, frozenset(unsupported), out)
    broken = [s.name for s, t in rows if fails_contract(s, t, options.contract) and not is_hang(t.detail)]
    broken += [f"{f.phase}: {f.message}" for f in found if f.contract and not is_hang(f.message)]
    hangs = [text for text in [t.detail for _, t in rows] + [f.message for f in found] if is_hang(text)]
    # The call that hung, rather than the later ones skipped because of it.
    hung = next((text for text in hangs if "not called" not in text), hangs[0]) if hangs else None
    if hung:  # what the hung call would have shown is unknown: no level is claimed, none denied
        out(f"level reached: not decided ({hung})")
    else:
        out(f"level reached: {level_name(level)}")
    contract_hung = any(fails_contract(s, t, options.contract) and is_hang(t.detail) for s, t in rows) \
        or any(f.contract and is_hang(f.message) for f in found)
    out(f"contract {options.contract}: " + (f"broken ({', '.join(broken)})" if broken else
                                            "not decided (a call hung)" if contract_hung else "kept"))
    return AuditResult(level, broken, rows, unsupported, found, hung)


def robustness_table(rows, out) -> None:
    """What the cache did with each tensor outside plain strided ones: refusing one
    (any exception) is safe; only a false hit fails."""
    for s, trial in rows:
        handled = trial.evidence.get("robustness")
        if handled:
            out(f"\n{'robustness (' + s.name + ')':35} outcome")
            for kind, outcome in handled.items():
                out(f"{kind:35} {outcome}"[:150])


def _row(s, trial, failed: bool, asks: str | None = None) -> str:
    lookups = trial.hits + trial.misses
    hits = f"{trial.hits}/{lookups}" if lookups else "-"
    column = asks if asks is not None else str(s.level)
    return f"{s.name:35} {column:5} {trial.status + (' !' if failed else ''):12} {hits:>9}  {trial.detail}"


def audit(spec: str, factory, options: AuditOptions, out=print) -> int:
    """The audit as the command line runs it; the exit code: 0 when the level
    meets ``--require`` and the contract is kept, 1 when a failure shows it does not
    (saying which), EXIT_HUNG when the only failures are calls that did not return in time."""
    result = run_audit(spec, factory, options, out)
    safe = result.level is not None and result.level >= options.require
    if safe and result.contract_kept:
        return 0
    reasons = []
    # What failed for certain: a call that hung is no evidence either way, and is set apart.
    failed = [s.name for s, t in result.rows
              if fails_level(s, t) and s.level <= options.require and not is_hang(t.detail)]
    failed += [f"{f.phase} ({f.level}: {f.message})" for f in result.search_failures
               if f.level <= options.require and not f.contract and not is_hang(f.message)]
    if failed:
        reasons.append(f"safety: does not reach {options.require} ({'; '.join(failed)})")
    if not result.contract_kept:
        reasons.append(f"hygiene: breaks contract {options.contract} ({', '.join(result.broken)})")
    if not reasons and result.hung:
        out(f"NOT DECIDED: {spec}: {result.hung}; a cache that hangs, or a machine too busy for the limit "
            f"(--call-timeout {options.timeout:g}): nothing else failed, and nothing is claimed")
        return EXIT_HUNG
    out(f"FAIL: {spec}: " + "; ".join(reasons or [f"safety: does not reach {options.require}"]))
    return 1


def search_below(spec, factory, level, options: AuditOptions, unsupported: frozenset, out):
    """Probe and search at ``level`` (with the hygiene checks ``--contract`` asks for);
    on a safety failure, the level drops below the failure's and both go on there: the
    probes in full, the search with the budget left; on a contract failure, they go on
    at the same level without those checks. Returns (level, failures). ``--budget 0``
    runs neither."""
    found = []
    contract = options.contract
    if not options.budget:
        out("probes and search: not run (--budget 0)")
        return level, found
    deadline = time.monotonic() + options.budget
    while level is not None:
        out(f"probes, then search: steps up to {level}" + (f", contract {contract}" if contract != "none" else "")
            + f", {max(0.0, deadline - time.monotonic()):.0f} s of --budget left, --seed {options.seed} ...")
        failure = find_failure(spec, factory, level, deadline - time.monotonic(), options.seed,
                               timeout=options.timeout, unsupported=unsupported, contract=contract, out=out)
        if failure is None:
            break
        found.append(failure)
        what = ("STOPPED, no verdict" if is_hang(failure.message) else
                "FAILED " + ("the contract" if failure.contract else f"at {failure.level}"))
        out(f"{failure.phase} {what} (found by {failure.found_by}): {failure.message}\n"
            f"reproduce with:\n\n{failure.snippet}")
        if failure.contract:
            contract = "none"
        else:
            level = level_below([failure.level])
    return level, found


__all__ = ["AuditOptions", "audit", "catalogue_failure", "first_failure", "run_audit",
           "run_in_every_dtype", "unsupported_dtypes"]
