"""CUDA-only checks: the caching allocator's own evidence and natural reuse on it.
Skipped, with the reason, where no GPU is present."""

from __future__ import annotations

import pytest
import torch

from harness.report.results import CLEAN, CONTAMINATED, INCONCLUSIVE
from harness.run import RunPlan, run_matrix
from repro.allocator import AddressArena

pytestmark = [pytest.mark.cuda,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")]
# Not cpu, not core_model: a CPU-only machine skips them all. diffusion where a model runs.


def test_arena_hands_out_fresh_tensors_at_one_cuda_address():
    arena = AddressArena((4, 8), device="cuda")
    a = arena.fresh(torch.ones(4, 8, device="cuda"))
    address = a.data_ptr()
    a.add_(1)
    del a
    b = arena.fresh(torch.zeros(4, 8, device="cuda"))
    assert b.data_ptr() == address and b._version == 0 and float(b.sum()) == 0.0


@pytest.mark.diffusion
def test_forced_and_natural_reuse_on_the_caching_allocator(tmp_path):
    plan = RunPlan(caches=["fingerprint", "hardened"], models={"toy": ["freed_address_reused", "natural_reuse"]},
                   seeds=[0], requests=4, device=torch.device("cuda"), steps=2)
    results = run_matrix(plan, tmp_path, progress=lambda line: None)
    forced = [r for r in results.records if r.scenario == "freed_address_reused" and r.request > 0]
    assert all(r.verdict == CONTAMINATED for r in forced if r.cache == "fingerprint")
    assert all(r.verdict == CLEAN for r in forced if r.cache == "hardened")
    natural = [r for r in results.records if r.scenario == "natural_reuse"]
    reused = [r for r in natural if r.address_reused]
    if not reused:
        pytest.skip(f"inconclusive: the caching allocator reused no address in {len(natural)} requests")
    for r in reused:
        events = r.allocator_events["positive"]
        # The allocator's own trace shows an allocation at the very address an earlier request freed.
        assert any(e["action"] == "alloc" and e["addr"] == r.addresses["positive"] for e in events), events
        assert r.verdict in (CONTAMINATED, CLEAN) and r.verdict != INCONCLUSIVE
    assert all(r.verdict != CONTAMINATED for r in natural if r.cache == "hardened")


@pytest.mark.diffusion
def test_real_helios_in_bfloat16_on_the_caching_allocator(tmp_path):
    """The real Helios transformer on CUDA (bfloat16, its default there): the seed's bug
    with the pre-fix cache, the fix clean, and what the fix leaves open closed by hardened."""
    plan = RunPlan(caches=["fingerprint", "weakref", "hardened"],
                   models={"helios": ["freed_address_reused", "storage_swapped", "natural_reuse"]},
                   seeds=[0], requests=4, device=torch.device("cuda"), steps=2)
    results = run_matrix(plan, tmp_path, progress=lambda line: None)
    assert results.models["helios"]["dtype"] == "bfloat16"
    later = [r for r in results.records if r.request > 0]

    def verdicts(scenario, cache):
        return {r.verdict for r in later if r.scenario == scenario and r.cache == cache}

    assert verdicts("freed_address_reused", "fingerprint") == {CONTAMINATED}
    assert verdicts("freed_address_reused", "weakref") == verdicts("freed_address_reused", "hardened") == {CLEAN}
    assert verdicts("storage_swapped", "weakref") == {CONTAMINATED}
    assert verdicts("storage_swapped", "hardened") == {CLEAN}
    assert all(r.verdict != CONTAMINATED for r in later if r.cache == "hardened")
    assert all(isinstance(r.allocator_events["positive"], list) for r in results.records)
