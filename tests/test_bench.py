"""The benchmark's own arithmetic and sampling (no timing goals: those are printed
by ``make bench``, never asserted here, because the machines are noisy)."""

from __future__ import annotations

import pytest

from cache_impl import DESIGNS
from harness.bench import _rounds, interleaved, lookup_samples, paired_ratio, size_samples

pytestmark = [pytest.mark.core_model, pytest.mark.cpu]  # no model runs here


def test_paired_ratio_is_the_median_of_per_repeat_ratios():
    # per-repeat ratios 0.5, 0.25, 2.0: median 0.5; the ratio of medians would be 4/4 = 1.0
    assert paired_ratio([1.0, 4.0, 8.0], [2.0, 16.0, 4.0]) == 0.5
    with pytest.raises(ValueError):
        paired_ratio([1.0, 2.0], [1.0])  # samples from different loops cannot be paired


def test_rounds_reverse_the_order_every_other_repeat():
    assert [list(r) for r in _rounds(["a", "b", "c"], 3)] == [["a", "b", "c"], ["c", "b", "a"], ["a", "b", "c"]]


def test_interleaved_calls_each_function_directly_number_times_per_sample():
    seen = []
    samples = interleaved({"x": (seen.append, 1), "y": (seen.append, 2)}, number=4, repeats=3)
    assert seen.count(1) == seen.count(2) == 12
    assert {k: len(v) for k, v in samples.items()} == {"x": 3, "y": 3}
    assert all(v > 0 for vs in samples.values() for v in vs)


def test_lookup_and_size_samples_cover_every_design_and_path():
    look, notes = lookup_samples(repeats=3, number=5, stale_entries=4)
    assert set(look) == {"hit (same object)", "hit (new view object)", "miss",
                         "stale (dead source)", "stale (rebound source)"}
    assert all(set(by_design) == set(DESIGNS) for by_design in look.values())
    assert notes == {"torch_weak_id": "misses on view objects"}  # the one design keyed by object identity
    puts, gets = size_samples(repeats=1, puts=3, sizes=(2, 8))
    assert set(puts) == set(gets) == {(n, s) for n in DESIGNS for s in (2, 8)}
