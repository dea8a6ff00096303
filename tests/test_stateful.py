"""Stateful property-based search: random interleavings of allocate (a lookup at an
empty address), free, view,
in-place update, storage swap, buffer refill, request bounds, lookup and insert,
checked against a plain oracle: a hit must be the value computed from the
looked-up tensor's *current* content.

Each design is searched with the situations its level claims to handle. For the
pre-fix ``fingerprint`` (searched at L1) and the seed fix ``weakref`` (at L2)
the search must find the false hit and shrink it to a short, readable sequence:
a search that finds nothing there is blind. Profiles: ``ci`` (default) and
``soak`` (``pytest --hypothesis-profile soak``), registered in conftest.py.
"""

from __future__ import annotations

import pytest
import torch
from hypothesis import reporting, strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule, run_state_machine_as_test

from cache_impl import DESIGNS, LEVELS, request_begins, request_ends
from repro.allocator import AddressArena
from repro.scenarios import project

pytestmark = [pytest.mark.core_model, pytest.mark.diffusion, pytest.mark.cpu]

SLOTS = 2  # addresses the sources take turns at: few, so the allocator's reuse is common
SHAPE = (2, 4)


def make_machine(factory, level: int):
    class CacheSearch(RuleBasedStateMachine):
        def __init__(self):
            super().__init__()
            self.level = level
            self.cache = factory(max_size=2)
            self.arenas = [AddressArena(SHAPE) for _ in range(SLOTS)]
            self.live = [None] * SLOTS  # the source now living at each address
            self.views = [[] for _ in range(SLOTS)]  # view objects of that source
            self.swapped = []  # sources whose storage was rebound away; still alive
            self.buffer = None  # a persistent inference-mode input buffer (L3)
            self.in_request = False
            self.made = 0

        def _content(self):
            self.made += 1  # every content is new and easy to read in a failure: all entries == made
            return torch.full(SHAPE, float(self.made))

        def _check(self, target, what: str):
            value = self.cache.get(target)
            if value is None:
                self.cache.put(target, project(target))
            else:
                assert torch.equal(value, project(target)), (
                    f"false hit on {what}: got a value computed from content {float(value.flatten()[0] - 1) / 2:g}, "
                    f"the tensor holds {float(target.flatten()[0]):g}")

        # Request bounds matter only to a request-scoped cache, and only the L3
        # search has anything (the persistent buffer) that needs them.
        @precondition(lambda self: self.level >= 3 and not self.in_request)
        @rule()
        def begin_request(self):
            self.in_request = True
            request_begins(self.cache)

        @precondition(lambda self: self.level >= 3 and self.in_request)
        @rule()
        def end_request(self):
            self.in_request = False
            request_ends(self.cache)

        @precondition(lambda self: self.level >= 3 and not self.in_request)
        @rule()
        def refill_buffer(self):
            with torch.inference_mode():
                if self.buffer is None:
                    self.buffer = torch.empty(SHAPE)
                self.buffer.copy_(self._content())

        @precondition(lambda self: self.level >= 3 and self.in_request and self.buffer is not None)
        @rule()
        def lookup_buffer(self):
            self._check(self.buffer, "the persistent buffer")

        @invariant()
        def bounded(self):
            assert len(self.cache) <= 2, f"{len(self.cache)} entries in a cache of max_size 2"

    for slot in range(SLOTS):
        _add_slot_rules(CacheSearch, slot)
    CacheSearch.__name__ = f"CacheSearch_{factory.__name__}_L{level}"
    return CacheSearch


def _add_slot_rules(machine, slot: int) -> None:
    """Rules per address (``lookup_0``, ``free_0``, ...), each with a precondition,
    so no step is ever a no-op and a shrunk counterexample reads as a story."""
    def live(self):
        return self.live[slot] is not None

    def lookup(self, via_view):
        """Look up the tensor at this address. Where none lives, a new request's
        tensor is allocated first: a fresh tensor at that address."""
        if self.live[slot] is None:
            self.live[slot] = self.arenas[slot].fresh(self._content())
        target = self.views[slot][-1] if via_view and self.views[slot] else self.live[slot]
        self._check(target, f"address {slot}" + (" (through a view)" if target is not self.live[slot] else ""))

    def free(self):
        self.live[slot], self.views[slot] = None, []

    def make_view(self):
        self.views[slot].append(self.live[slot][:])

    def update_in_place(self):
        with torch.no_grad():
            self.live[slot].add_(1000.0)

    def swap_storage(self):
        self.live[slot].set_(torch.zeros(SHAPE))  # stays alive; its address goes back to the arena
        self.swapped.append(self.live[slot])
        self.live[slot], self.views[slot] = None, []

    for fn in (lookup, free, make_view, update_in_place, swap_storage):
        fn.__name__ = fn.__qualname__ = f"{fn.__name__}_{slot}"  # how a counterexample prints the step
    rules = {
        "lookup": rule(via_view=st.booleans())(lookup),
        "free": precondition(lambda self: self.level >= 1 and live(self))(rule()(free)),
        "make_view": precondition(live)(rule()(make_view)),
        "update_in_place": precondition(live)(rule()(update_in_place)),
        "swap_storage": precondition(lambda self: self.level >= 2 and live(self))(rule()(swap_storage)),
    }
    for name, fn in rules.items():
        setattr(machine, f"{name}_{slot}", fn)


@pytest.mark.parametrize("name, level", [("fingerprint", 1), ("weakref", 2)])
def test_search_finds_and_shrinks_the_false_hit(name, level):
    lines: list[str] = []
    with reporting.with_reporter(lines.append):
        with pytest.raises(AssertionError, match="false hit") as failure:
            run_state_machine_as_test(make_machine(DESIGNS[name], level))
    example = "\n".join([*map(str, lines), *getattr(failure.value, "__notes__", [])])
    steps = [s for s in example.splitlines()
             if s.strip().startswith("state.") and not s.strip().startswith(("state.bounded", "state.teardown"))]
    print(f"\n{name} at L{level}: minimal counterexample\n{example}")
    assert 3 <= len(steps) <= 6, example  # shrunk: lookup, free (or swap), lookup, give or take
    assert any(("state.free_" if level == 1 else "state.swap_storage_") in s for s in steps), example


@pytest.mark.parametrize("name", list(DESIGNS))
def test_search_finds_nothing_at_the_level_a_design_claims(name):
    factory = DESIGNS[name]
    run_state_machine_as_test(make_machine(factory, LEVELS.index(factory.level)))
