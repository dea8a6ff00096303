"""The audit's generative search: it finds what the catalogue does not list, shrinks
it to a snippet that runs on its own, and finds nothing in the sound designs.

The mutants wrong only under a condition the catalogue never produces fall to the
probes first (tests/test_probes.py); here one of them checks that the random search
finds such a condition on its own too. Each search runs a fixed number of rounds, so
the outcome does not depend on machine speed.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from cache_impl import DESIGNS, Level
from harness.audit.mutants import MUTANTS, build
from harness.audit.search import HELPERS, SIZES, coverage_markdown, search

pytestmark = [pytest.mark.cpu]

# A layout the catalogue never makes (a zero stride): found within 10 rounds, measured
# (from seed 0, the test's, in its second round; from each of seeds 0 to 9, in 9 rounds at most).
# An inference tensor's shape or stride changed in place, which nothing else tells (no version):
# found in the first round from seed 0 (neither, in 30 rounds, before the search made such changes).
SEARCH_MUTANTS = [m for m in MUTANTS if m.name in ("expanded_keyed_as_contiguous", "fast_path_trusts_inference_layout",
                                                   "fast_path_trusts_inference_stride")]
ROUNDS = 30  # from seed 0


# Not core_model: shrinking a found failure takes 10-15 s a design.
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
    """A round at every max_size, 4 sequences each (the audit's search runs 50 a round)."""
    factory = DESIGNS[name]
    failure = search(name, factory, Level.parse(factory.level), budget=300, rounds=len(SIZES), examples_per_round=4)
    assert failure is None, f"{failure.message}\n{failure.snippet}"


@pytest.mark.parametrize("mutant", SEARCH_MUTANTS, ids=[m.name for m in SEARCH_MUTANTS])
def test_search_kills_what_the_catalogue_misses(mutant):
    """Whether the search finds a failure at all: unshrunk (the test above checks shrinking)."""
    assert mutant.search_only
    cls = build(mutant)
    failure = search(mutant.name, cls, Level.parse(cls.level), budget=600, rounds=ROUNDS, shrink=False)
    assert failure is not None, f"{mutant.name} survived: the search misses '{mutant.breaks}'"
    assert failure.level <= cls.level


@pytest.mark.core_model
def test_many_writes_at_once_never_move_a_version_back():
    """Near the top of torch's counter a step of many writes moves it on by one, as one write
    does. It was set to the cap instead, back to the version an entry was put at: the search
    found that false hit on the fingerprint design, which is right at L0 (seed 9, after the
    catalogue had run in the same process)."""
    import torch
    helpers = {"torch": torch}
    exec(HELPERS.format(thread_timeout=None), helpers)  # noqa: S102 - the snippets' own helpers
    t = torch.zeros(3)
    seen = []
    for writes in (2**31, 1, 2**31, 2**8, 2**16):
        with torch.no_grad():
            t.add_(1)
        helpers["written"](t, writes)
        seen.append(t._version)
    assert seen == sorted(set(seen)) and seen[2] == 3 * 2**30, seen  # each higher than the last


def test_the_search_moves_the_clock_the_cache_reads():
    """A cache wrong only once it has been up an hour (a long-running server's shortcut): the
    search moves the clock at any step, so it finds it without the probes (from seed 0 in its
    first round; it ran 4 rounds without a failure before the clock was a step)."""
    mutant = next(m for m in MUTANTS if m.name == "trusts_after_an_hour")
    cls = build(mutant)
    failure = search(mutant.name, cls, Level.parse(cls.level), budget=600, rounds=ROUNDS)
    assert failure is not None and "false hit" in failure.message
    steps = failure.snippet.split("# the steps the search shrank the failure to\n")[1]
    assert "advance(3600)" in steps, steps  # shrunk to the least time that shows it


@pytest.mark.core_model
def test_the_docs_show_what_the_search_draws():
    """docs/audit.md's account of the search is the list rendered from the strategies' constants."""
    page = (Path(__file__).parent.parent / "docs" / "audit.md").read_text()
    shown = page.split("<!-- search-coverage: generated by harness.audit.search.coverage_markdown() -->\n")[1]
    assert shown.split("<!-- /search-coverage -->")[0] == coverage_markdown()


def test_a_ctrl_c_that_hypothesis_answers_with_its_own_assert_is_still_a_ctrl_c(monkeypatch):
    # Seen with a Ctrl-C landing as hypothesis started its engine: its handler's
    # `assert state._runner is not None` failed, and the audit ended in that traceback (exit 1).
    import harness.audit.search as search_module
    from cache_impl.registry import CtrlC

    def engine_hit_at_its_start(machine, settings):
        try:
            raise CtrlC
        except BaseException:
            assert False, "state._runner is not None"

    monkeypatch.setattr(search_module, "run_state_machine_as_test", engine_hit_at_its_start)
    with pytest.raises(CtrlC):
        search("hardened", DESIGNS["hardened"], Level.L2, budget=5)


def test_the_search_counts_the_rounds_it_ran():
    """What the audit prints after the search ("N rounds of up to 50 sequences"): how much ran."""
    tally: dict = {}
    assert search("hardened", DESIGNS["hardened"], Level.L2, budget=300, rounds=2, examples_per_round=2,
                  tally=tally) is None
    assert tally == {"rounds": 2}
