"""The scenario catalogue over every registered design, each outcome asserted.

The bugs are asserted too: the pre-fix ``fingerprint`` design *must* hand
request B request A's value, and the seed fix (``weakref``) must be fooled by a
storage swap. A design that stops showing its known failure means the scenario
no longer forces the situation it claims to.
"""

from __future__ import annotations

import pytest

from cache_impl import DESIGNS, declared_level, resolve, LEVELS
from repro.scenarios import (BROKEN, CATALOGUE, FALSE_HIT, INCONCLUSIVE, PASS, WRONG_MISS,
                             reached_level, run_scenario)

pytestmark = [pytest.mark.core_model, pytest.mark.diffusion, pytest.mark.cpu]

# Every (design, scenario) pair not listed here must pass.
EXPECTED_FAILURES = {
    ("fingerprint", "freed_address_reused"): FALSE_HIT,
    ("fingerprint", "inference_freed_reused"): FALSE_HIT,
    ("fingerprint", "freed_id_and_address_reused"): FALSE_HIT,
    ("fingerprint", "source_dies_during_eviction"): FALSE_HIT,
    ("fingerprint", "natural_reuse"): FALSE_HIT,
    ("fingerprint", "cfg_two_sources"): FALSE_HIT,
    ("fingerprint", "storage_swapped"): FALSE_HIT,
    ("fingerprint", "storage_rebound"): FALSE_HIT,
    ("fingerprint", "persistent_buffer_inference"): FALSE_HIT,
    ("fingerprint", "lazy_stale_eviction"): BROKEN,
    ("fingerprint", "proactive_stale_eviction"): BROKEN,
    ("weakref", "storage_swapped"): FALSE_HIT,
    ("weakref", "storage_rebound"): FALSE_HIT,
    ("weakref", "persistent_buffer_inference"): FALSE_HIT,
    ("hardened", "persistent_buffer_inference"): FALSE_HIT,
    ("torch_weak_id", "persistent_buffer_inference"): FALSE_HIT,
    ("torch_weak_id", "new_view_reuse"): WRONG_MISS,  # identity keys: a new view object is a new key
}

EXPECTED_LEVELS = {"fingerprint": "L0", "weakref": "L1", "hardened": "L2",
                   "request_scoped": "L3", "torch_weak_id": "L2"}


def test_catalogue_covers_every_level():
    assert {s.level for s in CATALOGUE} == {0, 1, 2, 3}
    assert len({s.name for s in CATALOGUE}) == len(CATALOGUE)


def test_scenario_outcome(design, scenario, outside_cache):
    if outside_cache is not None:
        spec, required = outside_cache
        if scenario.level > required:
            pytest.skip(f"{scenario.name} is {LEVELS[scenario.level]}, above the required {LEVELS[required]}")
        expected = PASS
    else:
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
    assert LEVELS[reached_level(results)] == EXPECTED_LEVELS[name] == declared_level(factory)
