"""How we know the harness catches bugs: mutants, threads, memory."""

from __future__ import annotations

import pytest

from cache_impl import DESIGNS, Level
from harness.audit.runner import catalogue_failure
from harness.audit.mutants import GUARDS, MUTANTS, WEAKREF_WITHOUT_LOCK, build, generate
from harness.audit.selfcheck import memory_after, race_seen, stress_threads

pytestmark = [pytest.mark.core_model, pytest.mark.cpu]


def test_enough_mutants():
    assert len(MUTANTS) >= 28 and len({m.name for m in MUTANTS}) == len(MUTANTS)
    assert sum(m.search_only for m in MUTANTS) >= 10


def test_generated_mutants_are_seeded_and_each_edits_the_reference():
    """The same seed draws the same mutants; every guard is drawn; every edit applies
    (an edit whose text is gone raises), so each is the reference with one guard made
    conditional."""
    made = generate(200, seed=0)
    assert [g.mutant for g in made] == [g.mutant for g in generate(200, seed=0)]
    assert [g.mutant for g in made] != [g.mutant for g in generate(200, seed=1)]
    assert {g.guard for g in made} == set(GUARDS)
    assert len({g.mutant.breaks for g in made}) >= 180
    for g in made:
        assert g.predicate in g.mutant.breaks and build(g.mutant).level == Level.L2


CATALOGUE_MUTANTS = [m for m in MUTANTS if not m.search_only]
SEARCH_MUTANTS = [m for m in MUTANTS if m.search_only]


@pytest.mark.parametrize("mutant", CATALOGUE_MUTANTS, ids=[m.name for m in CATALOGUE_MUTANTS])
def test_catalogue_kills_its_mutants(mutant):
    cls = build(mutant)
    found = catalogue_failure(cls, cls.level)
    assert found is not None, f"{mutant.name} survived the catalogue: it misses '{mutant.breaks}'"


@pytest.mark.parametrize("mutant", SEARCH_MUTANTS, ids=[m.name for m in SEARCH_MUTANTS])
def test_search_only_mutants_pass_the_catalogue(mutant):
    """They are wrong only where the fixed catalogue never goes: it must not see them."""
    cls = build(mutant)
    assert catalogue_failure(cls, cls.level) is None


@pytest.mark.parametrize("name", list(DESIGNS))
def test_shared_cache_under_threads(name):
    """Every design is thread-safe: no exception, size bounded (read while no thread is
    inside the cache); at L1 and above no false hit although threads free and reuse
    addresses concurrently."""
    stats = stress_threads(DESIGNS[name])
    assert stats["exceptions"] == []
    assert stats["max_len"] <= 3
    if DESIGNS[name].level >= Level.L1:
        assert stats["false_hits"] == 0, f"{stats['false_hits']}/{stats['lookups']}"


def test_stress_catches_a_missing_lock():
    """The same stress on the seed-fix design with its lock removed: the race shows
    (up to 40 rounds, stopping at the first catch)."""
    assert race_seen(build(WEAKREF_WITHOUT_LOCK)), "40 rounds of thread stress did not catch a missing lock"


@pytest.mark.parametrize("name", list(DESIGNS))
def test_memory_after_many_requests(name):
    m = memory_after(DESIGNS[name], requests=1000, max_size=2)
    assert m["kept_sources"] == 0  # never keeps a freed source alive
    assert m["peak_values"] <= 2  # never more values than max_size
    if DESIGNS[name].level >= Level.L1:
        assert m["stale_values_after_next_insert"] == 0  # dead sources' values go at the next insert


def test_a_design_the_probes_fail_is_a_false_alarm_in_selfcheck(monkeypatch):
    """selfcheck's every-row run of the registered designs says which failed, and where:
    a mutant registered as a design stands in for a sound design the harness misjudges."""
    import harness.audit.selfcheck as selfcheck
    mutant = next(m for m in MUTANTS if not m.search_only)
    monkeypatch.setattr(selfcheck, "DESIGNS", {mutant.name: build(mutant)})
    printed = []
    assert selfcheck.false_alarm_table(out=printed.append, workers=1) is False
    assert printed[1].startswith(mutant.name) and "FAILED at row" in printed[1], printed
