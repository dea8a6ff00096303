"""How we know the harness catches bugs: mutants, threads, memory."""

from __future__ import annotations

import pytest

from cache_impl import DESIGNS, LEVELS
from harness.audit import first_failure
from harness.mutants import MUTANTS, WEAKREF_WITHOUT_LOCK, build
from harness.selfcheck import memory_after, stress_threads

pytestmark = [pytest.mark.core_model, pytest.mark.diffusion, pytest.mark.cpu]


def test_enough_mutants():
    assert len(MUTANTS) >= 12 and len({m.name for m in MUTANTS}) == len(MUTANTS)


@pytest.mark.parametrize("mutant", MUTANTS, ids=[m.name for m in MUTANTS])
def test_every_mutant_is_killed(mutant):
    cls = build(mutant)
    failure = first_failure(cls, LEVELS.index(cls.level))
    assert failure is not None, f"{mutant.name} survived: the catalogue misses '{mutant.breaks}'"


@pytest.mark.parametrize("name", list(DESIGNS))
def test_shared_cache_under_threads(name):
    """Every design is thread-safe: no exception, size bounded; at L1 and above
    no false hit although threads free and reuse addresses concurrently."""
    stats = stress_threads(DESIGNS[name])
    assert stats["exceptions"] == []
    assert stats["max_len"] <= 8
    if LEVELS.index(DESIGNS[name].level) >= 1:
        assert stats["false_hits"] == 0, f"{stats['false_hits']}/{stats['lookups']}"


def test_stress_catches_a_missing_lock():
    """The same stress on the seed-fix design with its lock removed: the race shows.
    A race is a matter of timing, so up to five rounds; each one alone caught it in
    nearly every run measured."""
    unlocked = build(WEAKREF_WITHOUT_LOCK)
    caught = any(stress_threads(unlocked, requests=300)["exceptions"] for _ in range(5))
    assert caught, "five rounds of thread stress did not catch an unlocked cache"


@pytest.mark.parametrize("name", list(DESIGNS))
def test_memory_after_many_requests(name):
    m = memory_after(DESIGNS[name], requests=1000, max_size=2)
    assert m["kept_sources"] == 0  # never keeps a freed source alive
    assert m["peak_values"] <= 2  # never more values than max_size
    if LEVELS.index(DESIGNS[name].level) >= 1:
        assert m["stale_values_after_next_insert"] == 0  # dead sources' values go at the next insert
