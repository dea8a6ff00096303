"""The scenario catalogue over every registered design, each outcome asserted.

The bugs are asserted too: the pre-fix ``fingerprint`` design *must* hand
request B request A's value, and the seed fix (``weakref``) must be fooled by a
storage swap. A design that stops showing its known failure means the scenario
no longer forces the situation it claims to.
"""

from __future__ import annotations

import pytest

from cache_impl import DESIGNS, Level, declared_level, resolve
from repro.scenarios import (BROKEN, CATALOGUE, FALSE_HIT, INCONCLUSIVE, PASS, WRONG_MISS,
                             reached_level, run_scenario)

pytestmark = [pytest.mark.core_model, pytest.mark.cpu]

# Every (design, scenario) pair not listed here must pass.
L2_HOLES = ("storage_swapped", "storage_rebound", "rebound_away_and_back", "rebound_back_through_older_entry",
            "module_dtype_round_trip")
L3_HOLES = ("persistent_buffer_inference", "storage_resized_regrown", "rewritten_through_alias",
            "rebound_back_to_a_rewritten_buffer")

# Every (design, scenario) pair not listed here must pass.
EXPECTED_FAILURES = {
    **{("fingerprint", s): FALSE_HIT for s in (
        "freed_address_reused", "inference_freed_reused", "freed_id_and_address_reused",
        "source_dies_during_eviction", "natural_reuse", "cfg_two_sources", "dropped_view_base_rewritten_freed",
        *L2_HOLES, *L3_HOLES)},
    ("fingerprint", "lazy_stale_eviction"): BROKEN,
    ("fingerprint", "proactive_stale_eviction"): BROKEN,
    **{("weakref", s): FALSE_HIT for s in (*L2_HOLES, *L3_HOLES)},
    **{(design, s): FALSE_HIT for design in ("hardened", "torch_weak_id") for s in L3_HOLES},
    ("torch_weak_id", "new_view_reuse"): WRONG_MISS,  # identity keys: a new view object is a new key
    # Liveness of the object, not of its storage: the entry dies with the step's view.
    ("weakref", "fresh_view_per_step"): WRONG_MISS,
    ("torch_weak_id", "fresh_view_per_step"): WRONG_MISS,
}

EXPECTED_LEVELS = {"fingerprint": Level.L0, "weakref": Level.L1, "hardened": Level.L2,
                   "request_scoped": Level.L3, "torch_weak_id": Level.L2}


def test_catalogue_covers_every_level():
    assert {s.level for s in CATALOGUE} == set(Level)
    assert len({s.name for s in CATALOGUE}) == len(CATALOGUE)


def test_scenario_outcome(design, scenario):
    expected = EXPECTED_FAILURES.get((design, scenario.name), PASS)
    trial = run_scenario(scenario, resolve(design))
    if trial.status == INCONCLUSIVE:
        pytest.skip(f"inconclusive, not a pass: {trial.detail}")
    assert trial.status == expected, f"{design} / {scenario.name}: {trial.status}: {trial.detail}"
    if trial.status == FALSE_HIT:
        assert trial.address_reused, "a false hit must come with evidence of the reused address"


@pytest.mark.parametrize("name", list(DESIGNS))
def test_design_reaches_its_declared_level(name):
    factory = DESIGNS[name]
    results = [(s, run_scenario(s, factory)) for s in CATALOGUE]
    assert reached_level(results) == EXPECTED_LEVELS[name] == declared_level(factory)
