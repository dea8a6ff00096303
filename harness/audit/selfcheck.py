"""``make selfcheck``: how we know the harness catches bugs.

- mutation kill rate: every deliberately broken variant of ``hardened`` must fail
  the audit at the level it claims;
- false alarms: every registered design passes every probe row at the level it
  declares (the suite runs the larger caches' rows for ``hardened`` only);
- concurrency: threads serving requests through one shared cache;
- memory: what each design holds after many requests, counted, not assumed.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
import threading
import time

import torch

from cache_impl import DESIGNS, Level
from harness.audit import GENERATED
from harness.audit.runner import first_failure
from harness.audit.mutants import ATOMS, GUARDS, MUTANTS, WEAKREF_WITHOUT_LOCK, Mutant, build, generate
from harness.audit.probes import probe
from repro.scenarios import SHAPE, project, values_held


GENERATED_GOAL = 0.95  # the share of them the audit must kill


def audit_mutant(mutant: Mutant) -> str | None:
    """What kills the mutant in an audit as a user runs it (catalogue, then the probes
    and the search at the default budget and seed, stopping at the first failure), or None."""
    cls = build(mutant)
    return first_failure(cls, Level.parse(cls.level), spec=mutant.name)


def _in_processes(fn, items: list, workers: int | None = None):
    """``fn`` of each item, yielded in order, across ``workers`` processes (default: one per core)."""
    workers = workers or os.cpu_count() or 1
    if workers == 1:
        yield from map(fn, items)
        return
    with multiprocessing.get_context("fork").Pool(workers) as pool:
        yield from pool.imap(fn, items, chunksize=1)


def audit_all(mutants: list, workers: int | None = None):
    """``audit_mutant`` of each, yielded in order as they finish, across ``workers``
    processes (default: one per core)."""
    yield from _in_processes(audit_mutant, mutants, workers)


def probe_design(name: str) -> tuple[int, int, str | None]:
    """A registered design through every probe row at the level it declares: (rows run,
    rows, the failure's message or None). A failure is the harness judging a design
    wrong that its level says is right, or a design's real defect: either way, a finding."""
    factory = DESIGNS[name]
    report = probe(name, factory, Level.parse(factory.level), contract="lru")
    return report.rows, report.total, report.failure.message if report.failure else None


def false_alarm_table(out=print, workers: int | None = None) -> bool:
    """Every design at its declared level on every row; True when all pass every row."""
    out(f"{'design':15} {'level':5} result")
    clean = True
    for name, (rows, total, failure) in zip(DESIGNS, _in_processes(probe_design, list(DESIGNS), workers)):
        clean = clean and failure is None and rows == total
        result = f"FAILED at row {rows}: {failure}" if failure else f"{rows}/{total} rows pass"
        out(f"{name:15} {str(Level.parse(DESIGNS[name].level)):5} {result}"[:150])
    return clean


def kill_table(out=print, workers: int | None = None) -> tuple[int, int]:
    """Audit every hand-written mutant as a user would (catalogue, then search); print
    mutant, killed or alive, and what killed it."""
    out(f"{'mutant':30} {'wrong in':9} result")
    killed = 0
    for m, failure in zip(MUTANTS, audit_all(MUTANTS, workers)):
        killed += failure is not None
        where = "beyond" if m.search_only else "catalogue"
        out(f"{m.name:30} {where:9} {'killed by ' + failure if failure else 'ALIVE: ' + m.breaks}"[:150])
    out(f"killed {killed}/{len(MUTANTS)} ({sum(m.search_only for m in MUTANTS)} of them wrong only beyond "
        f"what the catalogue makes)")
    return killed, len(MUTANTS)


def generated_table(count: int = GENERATED, seed: int = 0, out=print, workers: int | None = None) -> tuple[int, int]:
    """Audit ``count`` generated mutants (seeded): print each as it is judged, the
    kill rate by guard, and every survivor with its predicate."""
    made = generate(count, seed)
    out(f"{'mutant':6} {'guard skipped':17} result")
    failures = []
    for g, failure in zip(made, audit_all([g.mutant for g in made], workers)):
        failures.append(failure)
        out(f"{g.name:6} {g.guard:17} {'killed by ' + failure if failure else 'ALIVE when ' + g.predicate}"[:150])
    killed = sum(f is not None for f in failures)
    out(f"\n{'guard skipped':17} killed")
    for guard in GUARDS:
        mine = [f for g, f in zip(made, failures) if g.guard == guard]
        if mine:
            out(f"{guard:17} {sum(f is not None for f in mine):>3}/{len(mine)}")
    out(f"\n{'family':17} killed  (the mutants whose predicate draws on it)")
    for family in [*ATOMS, "3-way"]:
        mine = [f for g, f in zip(made, failures) if family in g.families]
        if mine:
            out(f"{family:17} {sum(f is not None for f in mine):>3}/{len(mine)}")
    survivors = [g for g, f in zip(made, failures) if f is None]
    out(f"generated (seed {seed}): killed {killed}/{count} ({killed / count:.1%}); survivors: {len(survivors)}")
    for g in survivors:
        out(f"  ALIVE {g.name}: {g.mutant.breaks}")
    return killed, count


def stress_threads(factory, threads: int = 4, requests: int = 150, max_size: int = 3, steps: int = 3,
                   size_every: int | None = 10) -> dict:
    """Several threads serve requests through one shared cache, each with its own
    sources, allocated and freed concurrently, more of them than the cache holds
    (evictions race lookups). Every other lookup goes through a
    new view object (``src[:]``, ``src.detach()``), so designs with an identity
    fast path race on their slow path too. Counts exceptions, false hits and the
    largest size seen.

    The size is read only while no thread is inside the cache: every ``size_every``
    requests all threads meet at a barrier and the barrier's action reads it. Read
    mid-operation, it would catch a put between its insert and its eviction and count
    a bound the cache keeps. Between the meetings the threads run free, so races show;
    ``size_every=None``: no meeting, the size is read once, after the last request."""
    cache = factory(max_size=max_size)
    lock = threading.Lock()
    stats = {"exceptions": [], "false_hits": 0, "lookups": 0, "max_len": 0}

    def quiescent_size():
        stats["max_len"] = max(stats["max_len"], len(cache))

    barrier = threading.Barrier(threads, action=quiescent_size)

    def serve(seed: int):
        g = torch.Generator().manual_seed(seed)
        try:
            for request in range(requests):
                sources = [torch.randn(SHAPE, generator=g) for _ in range(2)]
                false_hits = 0
                for step in range(steps):
                    for src in sources:
                        target = (src, src[:], src.detach())[step % 3]
                        value = cache.get(target)
                        if value is None:
                            cache.put(target, project(target))
                        elif not torch.equal(value, project(target)):
                            false_hits += 1
                with lock:
                    stats["false_hits"] += false_hits
                    stats["lookups"] += steps * len(sources)
                if size_every and request % size_every == size_every - 1:
                    barrier.wait()  # with every thread's sources alive: the cache is as full as it gets
                del sources, src, target, value
        except threading.BrokenBarrierError:
            pass  # another thread raised and broke the barrier; its exception is recorded
        except Exception as exc:  # noqa: BLE001 - recorded: any exception is a finding
            with lock:
                stats["exceptions"].append(f"{type(exc).__name__}: {exc}")
            barrier.abort()  # the others stop at the barrier instead of waiting for this thread

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)  # switch threads often: races show up in fewer requests
    try:
        workers = [threading.Thread(target=serve, args=(i,)) for i in range(threads)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
    finally:
        sys.setswitchinterval(interval)
    quiescent_size()  # after the last request too (a broken barrier skips its action)
    return stats


def race_seen(factory, rounds: int = 40) -> list[str]:
    """The exceptions a thread stress raises in a cache known to race, over up to
    ``rounds`` rounds (a race is a matter of timing: a round of free-running threads
    shows the missing lock about three times in four on a loaded 2-core machine, so
    40 rounds miss it with odds below 1e-20); empty if none showed."""
    for _ in range(rounds):
        exceptions = stress_threads(factory, requests=300, size_every=None)["exceptions"]
        if exceptions:
            return exceptions
    return []


def memory_after(factory, requests: int = 1000, max_size: int = 2) -> dict:
    """What a design holds after ``requests`` requests (see ``values_held``)."""
    return values_held(factory, requests, max_size)


def main(generated: int = GENERATED, generated_seed: int = 0) -> int:
    started = time.perf_counter()
    print("mutation kill rate: deliberately broken variants of hardened / request_scoped")
    killed, total = kill_table()
    generated_killed = 0
    if generated:
        print(f"\ngenerated mutants: one guard of hardened skipped only when a random predicate holds "
              f"({os.cpu_count()} workers)")
        generated_killed, generated = generated_table(generated, generated_seed)
    print("\nfalse alarms: every design through every probe row at the level it declares")
    no_false_alarm = false_alarm_table()
    print("\nconcurrency: 4 threads x 150 requests through one shared cache (max_size=3), "
          "every other lookup through a new view object")
    print(f"{'design':15} {'exceptions':>10} {'false hits':>12} {'max len':>8}")
    for name, factory in DESIGNS.items():
        s = stress_threads(factory)
        print(f"{name:15} {len(s['exceptions']):>10} {s['false_hits']:>5}/{s['lookups']:<6} {s['max_len']:>8}")
    seen = race_seen(build(WEAKREF_WITHOUT_LOCK))
    print(f"control {WEAKREF_WITHOUT_LOCK.name} ({WEAKREF_WITHOUT_LOCK.breaks}): "
          + (f"caught, e.g. {seen[0][:60]}" if seen else "NOT caught in 40 rounds: the stress is blind to it"))
    print("\nmemory after 1,000 requests (max_size=2, two sources per request)")
    print(f"{'design':15} {'peak values':>12} {'peak bytes':>11} {'sources kept':>13} {'stale after insert':>19}")
    for name, factory in DESIGNS.items():
        m = memory_after(factory)
        print(f"{name:15} {m['peak_values']:>12} {m['peak_bytes']:>11,} {m['kept_sources']:>13} "
              f"{m['stale_values_after_next_insert']:>19}")
    print(f"\n{time.perf_counter() - started:.1f}s")
    return 0 if killed == total and generated_killed >= GENERATED_GOAL * generated and seen and no_false_alarm \
        else 1
