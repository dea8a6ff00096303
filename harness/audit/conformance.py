"""The audit as pytest tests, for the plugin in ``harness.pytest_plugin``: one test
per catalogue scenario and one for the probes and search, each judged exactly as
``python -m harness audit`` judges it."""

from __future__ import annotations

import pytest

from harness.audit.runner import run_in_every_dtype
from harness.audit.probes import find_failure
from repro.scenarios import FALSE_HIT, INCONCLUSIVE, applies, fails_contract, fails_level


def test_scenario(audited_scenario, audited_cache):
    spec, factory, options, unsupported = audited_cache
    s = audited_scenario
    if s.contract is None and s.level > options.require:
        pytest.skip(f"{s.name} is {s.level}, above the required {options.require}")
    if s.contract is not None and not applies(s, options.contract):
        pytest.skip(f"{s.name} is hygiene that contract {options.contract} does not ask for")
    trial = run_in_every_dtype(s, factory, options, unsupported)
    if trial.status == INCONCLUSIVE:
        pytest.skip(f"inconclusive, not a pass: {trial.detail}")
    kind = "hygiene" if s.contract else "safety"
    assert not (fails_level(s, trial) or fails_contract(s, trial, options.contract)), (
        f"{spec} / {s.name} ({kind}): {trial.status}: {trial.detail}")
    if trial.status == FALSE_HIT:
        assert trial.address_reused, "a false hit must come with evidence of the reused address"


def test_search(audited_cache):
    spec, factory, options, unsupported = audited_cache
    if not options.budget:
        pytest.skip("--cache-budget 0: no search")
    import torch
    skip = frozenset(getattr(torch, name) for name in unsupported)
    failure = find_failure(spec, factory, options.require, options.budget, options.seed, timeout=options.timeout,
                           unsupported=skip)
    assert failure is None, (f"{failure.phase} found a failure at {failure.level} ({failure.found_by}): "
                             f"{failure.message}\nreproduce with:\n\n{failure.snippet}")
