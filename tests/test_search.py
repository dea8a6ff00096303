"""The audit's generative search: it finds what the catalogue does not list, shrinks
it to a snippet that runs on its own, and finds nothing in the sound designs.

The search mutants are each wrong only under a condition the catalogue never
produces (a size, a fill level, a hit count, a dtype, a layout, a grad mode);
``make selfcheck`` audits them with the audit's default budget. Here each search
runs a fixed number of rounds, so the outcome does not depend on machine speed.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from cache_impl import DESIGNS, Level
from harness.mutants import MUTANTS, build
from harness.search import SIZES, search

pytestmark = [pytest.mark.cpu]

# One search mutant per kind of condition the catalogue never produces: a hit count,
# a cache size, a layout. ``make selfcheck`` audits all of them as a user would
# (default budget and seed); these few keep the suite short.
SAMPLED = ("trusts_entry_after_many_hits", "large_cache_skips_liveness", "expanded_keyed_as_contiguous")
SEARCH_MUTANTS = [m for m in MUTANTS if m.name in SAMPLED]
ROUNDS = 30  # from seed 0; each of these falls within 10 rounds, measured


@pytest.mark.core_model
@pytest.mark.parametrize("name, level", [("fingerprint", Level.L1), ("weakref", Level.L2)])
def test_search_finds_shrinks_and_prints_a_runnable_snippet(name, level, tmp_path):
    failure = search(name, DESIGNS[name], level, budget=120, rounds=ROUNDS)
    assert failure is not None, f"the search is blind: {name} has a false hit at {level}"
    assert failure.level == level and "false hit" in failure.message
    steps = failure.snippet.split("# the steps the search shrank the failure to\n")[1].strip().splitlines()
    assert len(steps) <= 12, failure.snippet  # shrunk: allocate, look up, free or rebind, look up again
    script = tmp_path / "reproduce.py"
    script.write_text(failure.snippet)
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 1 and "AssertionError: false hit" in run.stderr, run.stderr[-2000:]


@pytest.mark.parametrize("name", list(DESIGNS))
def test_search_finds_nothing_at_the_level_a_design_claims(name):
    factory = DESIGNS[name]
    failure = search(name, factory, Level.parse(factory.level), budget=300, rounds=len(SIZES), examples_per_round=25)
    assert failure is None, f"{failure.message}\n{failure.snippet}"


@pytest.mark.parametrize("mutant", SEARCH_MUTANTS, ids=[m.name for m in SEARCH_MUTANTS])
def test_search_kills_what_the_catalogue_misses(mutant):
    assert mutant.search_only
    cls = build(mutant)
    failure = search(mutant.name, cls, Level.parse(cls.level), budget=600, rounds=ROUNDS)
    assert failure is not None, f"{mutant.name} survived: the search misses '{mutant.breaks}'"
    assert failure.level <= cls.level
