"""Verdicts on five patterns of real-world cache (stand-ins in tests/stand_ins), the
audit as a user runs it but without the search (budget 0), so the figures do not
depend on machine speed. The README gives one line on why each verdict holds."""

from __future__ import annotations

import pytest

from cache_impl import Level, resolve
from harness.audit.runner import AuditOptions, run_audit, run_in_every_dtype, unsupported_dtypes
from repro.scenarios import CATALOGUE, FALSE_HIT, PASS

pytestmark = [pytest.mark.core_model, pytest.mark.cpu]

L1_SCENARIOS = ("freed_address_reused", "freed_id_and_address_reused", "natural_reuse", "cfg_two_sources")


def _audit(name: str, **options):
    factory = resolve(f"tests.stand_ins.caches:{name}")
    result = run_audit(name, factory, AuditOptions(budget=0, **options), out=lambda *a: None)
    return result, {s.name: t for s, t in result.rows}


def test_pre_fix_fingerprint_lru_hands_over_freed_addresses():
    result, rows = _audit("PreFixFingerprintLRU")
    assert result.level is None
    assert all(rows[s].status == FALSE_HIT for s in ("freed_address_reused", "cfg_two_sources"))
    assert "lazy_stale_eviction" in [s.name for s, t in result.rows if t.status != PASS]


def test_weakref_fix_is_clean_on_reuse_but_not_on_what_its_key_cannot_see():
    result, rows = _audit("WeakrefSourceLRU")
    assert all(rows[s].status in (PASS, "inconclusive") for s in L1_SCENARIOS)
    assert rows["conj_and_neg_views"].status == FALSE_HIT  # no conj bit in the key
    assert "Inference tensors" in rows["inference_reuse"].detail  # _version raises under inference_mode
    assert result.level is None and result.contract_kept


def test_float32_only_key_is_judged_on_float32_and_names_the_rest():
    result, rows = _audit("TensorKeyMemo")
    assert set(result.unsupported) >= {"bfloat16", "float16"}
    assert rows["in_place_update"].status == FALSE_HIT  # no version in the key
    assert rows["freed_address_reused"].status == PASS  # the weakref holds on reuse


def test_per_request_dict_needs_no_grad_and_no_contract():
    under_grad, rows = _audit("PerRequestDict", grad_mode="enabled", contract="none")
    assert sum(t.hits for t in rows.values()) == 0  # switched off: the audit says so in a hint
    result, rows = _audit("PerRequestDict", contract="none")
    assert result.contract_kept
    assert all(rows[s].status in (PASS, "inconclusive") for s in L1_SCENARIOS)


def test_pointer_table_keyed_by_address_alone_fails_at_l0():
    result, rows = _audit("PointerTable")
    assert result.level is None and rows["same_address_views"].status == FALSE_HIT


def test_every_registered_design_keeps_lru_order():
    """The catalogue's LRU scenarios only, each judged as the audit judges it (every dtype the design takes)."""
    lru = [s for s in CATALOGUE if s.contract == "lru"]
    assert lru
    for name in ("fingerprint", "weakref", "hardened", "request_scoped", "torch_weak_id"):
        factory, options = resolve(name), AuditOptions(budget=0, require=Level.L0)
        unsupported = unsupported_dtypes(factory, options)
        broken = [s.name for s in lru if run_in_every_dtype(s, factory, options, unsupported).status != PASS]
        assert not broken, (name, broken)
