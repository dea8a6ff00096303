"""The tensor-level scenario catalogue: one allocator situation each, forced
deterministically on CPU (and CUDA), run against any cache.

Each scenario states the lowest guarantee level that must pass it (DESIGN
levels L0-L3). A cache *reaches* level L when it passes every scenario at
L and below. One catalogue serves the pytest suite, ``python -m harness audit``
and the pipeline-level runs.

Two kinds of scenario. *Safety* scenarios decide the level: no lookup may return a
value computed from other data, and no source may be kept alive. *Hygiene*
scenarios check a contract beside it (LRU order, the bound, dropping dead
entries, memory held); each names the weakest contract that asks for it, and
fails the audit only under a contract that does (``CONTRACTS``).

Outcomes:
  pass          every lookup returned the source's own value, or missed
  false hit     a lookup returned a value computed from other content
  wrong miss    a lookup that should hit missed (in an advisory scenario: lost reuse, not a failure)
  broken        the cache raised, hung or exited, or a hygiene check failed
  inconclusive  the allocator did not reuse an address: nothing was tested
"""

from __future__ import annotations

import gc
import warnings
import weakref
from dataclasses import dataclass, field
from typing import Callable

import torch

from cache_impl import Level, level_below, request_begins, request_ends
from repro.allocator import AddressArena
from repro.choices import CONTRACTS
from repro.guard import DEFAULT_TIMEOUT, CacheCallFailed, NotTested, guarded

PASS, FALSE_HIT, WRONG_MISS, BROKEN, INCONCLUSIVE = (
    "pass", "false hit", "wrong miss", "broken", "inconclusive")

SHAPE = (2, 16, 32)  # a small stand-in for (batch, text tokens, text dim)


def project(source: torch.Tensor) -> torch.Tensor:
    """The cached work: a value computed from the source's content (a new tensor)."""
    return source * 2 + 1


@dataclass
class Trial:
    status: str
    detail: str = ""
    address_reused: bool | None = None
    evidence: dict = field(default_factory=dict)
    hits: int = 0
    misses: int = 0


@dataclass(frozen=True)
class Scenario:
    name: str
    level: Level  # lowest guarantee level that must pass it
    summary: str
    run: Callable[[Callable], Trial]
    advisory: bool = False  # a wrong miss here costs reuse, not correctness
    contract: str | None = None  # a hygiene check: the weakest contract that asks for it; None: safety


CATALOGUE: list[Scenario] = []


def scenario(name: str, level: int, summary: str, advisory: bool = False, contract: str | None = None):
    def register(fn):
        registered = Scenario(name, Level(level), summary, fn, advisory, contract)
        CATALOGUE.append(registered)
        return registered  # the scenario itself: one identity for the catalogue and the pipeline
    return register


def get_scenario(name: str) -> Scenario:
    for s in CATALOGUE:
        if s.name == name:
            return s
    raise KeyError(f"unknown scenario {name!r}: choose from {', '.join(s.name for s in CATALOGUE)}")


class Probe:
    """Drives a cache as a model does (look up; on a miss compute and insert)
    and judges every lookup against the source's own content. Holds no
    reference to any source, so freeing one in a scenario really frees it."""

    def __init__(self, cache):
        self.cache = cache
        self.false_hits: list[str] = []
        self.wrong_misses: list[str] = []
        self.hits = 0
        self.misses = 0

    def begin(self) -> None:
        request_begins(self.cache)

    def end(self) -> None:
        request_ends(self.cache)

    def lookup(self, source: torch.Tensor, label: str, expect_hit: bool = False) -> None:
        value = self.cache.get(source)
        if value is None:
            self.misses += 1
            if expect_hit:
                self.wrong_misses.append(label)
            self.cache.put(source, project(source))
            return
        self.hits += 1
        own = project(source)
        if not (isinstance(value, torch.Tensor) and value.shape == own.shape
                and value.dtype == own.dtype and torch.equal(value, own)):
            self.false_hits.append(label)

    def verdict(self, advisory: bool = False, **extra) -> Trial:
        if self.false_hits:
            status, detail = FALSE_HIT, "another source's value returned at: " + _first(self.false_hits)
        elif self.wrong_misses:
            status = WRONG_MISS
            detail = (("advisory, lost reuse only: " if advisory else "")
                      + "missed where a hit was due: " + _first(self.wrong_misses))
        else:
            status, detail = PASS, ""
        return Trial(status, detail, hits=self.hits, misses=self.misses, **extra)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun if n == 1 else noun[:-1] + 'ies' if noun.endswith('y') else noun + 's'}"


def _first(labels: list[str], n: int = 3) -> str:
    more = f" (+{len(labels) - n} more)" if len(labels) > n else ""
    return ", ".join(labels[:n]) + more


def _content(seed: int, shape=SHAPE, dtype=None) -> torch.Tensor:
    """Seeded content in ``dtype`` (default: torch's default dtype, which the audit
    sets to each dtype it tries)."""
    g = torch.Generator().manual_seed(seed)
    return torch.randn(shape, generator=g, dtype=dtype)


def _forced_evidence(arena: AddressArena, freed_by: str, reused_by: str) -> dict:
    return {"address": hex(arena.address), "freed_by": freed_by, "reused_by": reused_by,
            "how": "forced (same address, fresh tensor, version 0)"}


# --- reuse within a request: a correct cache must keep these hits -------------

@scenario("same_object_reuse", 0, "the same live source object looked up at every denoise step")
def _same_object(make_cache):
    probe = Probe(make_cache(max_size=2))
    src = _content(1)
    probe.begin()
    for step in range(4):
        probe.lookup(src, f"step {step}", expect_hit=step > 0)
    probe.end()
    return probe.verdict()


@scenario("new_view_reuse", 0, "new view objects of the same live tensor (src[:], view, detach)", advisory=True)
def _new_view(make_cache):
    probe = Probe(make_cache(max_size=2))
    src = _content(2)
    probe.begin()
    probe.lookup(src, "original")
    for label, view in (("src[:]", src[:]), ("src.view(shape)", src.view(src.shape)), ("src.detach()", src.detach())):
        probe.lookup(view, label, expect_hit=True)
    probe.end()
    return probe.verdict(advisory=True)


@scenario("fresh_view_per_step", 0,
          "a new view of the same live tensor at every step, the previous one dropped (LTX-Video's .view())",
          advisory=True)
def _fresh_view(make_cache):
    probe = Probe(make_cache(max_size=2))
    base = _content(3)
    probe.begin()
    for step in range(4):
        probe.lookup(base.view(base.shape), f"step {step} (a new view; the last one is gone)", expect_hit=step > 0)
    probe.end()
    return probe.verdict(advisory=True)


@scenario("inference_reuse", 0, "an inference-mode source (no version counter) looked up at every step")
def _inference_reuse(make_cache):
    probe = Probe(make_cache(max_size=2))
    with torch.inference_mode():
        src = _content(3).clone()
        probe.begin()
        for step in range(3):
            probe.lookup(src, f"step {step}", expect_hit=step > 0)
        probe.end()
    return probe.verdict()


# --- distinct sources that a fingerprint already separates --------------------

@scenario("distinct_live_sources", 0, "two live sources of one layout, different content")
def _distinct_live(make_cache):
    probe = Probe(make_cache(max_size=2))
    a, b = _content(4), _content(5)
    probe.begin()
    for step in range(3):
        probe.lookup(a, f"A step {step}", expect_hit=step > 0)
        probe.lookup(b, f"B step {step}", expect_hit=step > 0)
    probe.end()
    return probe.verdict()


@scenario("same_address_views", 0, "views with one data_ptr but other shape, stride or dtype; and other offsets")
def _same_address_views(make_cache):
    probe = Probe(make_cache(max_size=8))
    base = _content(6, shape=(4, 8))
    views = {
        "(4,8)": base,
        "view(8,4)": base.view(8, 4),
        "t() (8,4) other stride": base.t(),
        "view(int32)": base.view(torch.int32),
        "view(32)": base.view(32),
        "base[1] offset": base[1],
    }
    probe.begin()
    for rnd in range(2):
        for label, v in views.items():
            probe.lookup(v, f"{label} round {rnd}", expect_hit=rnd > 0)
    probe.end()
    return probe.verdict()


@scenario("same_object_reinterpreted", 0,
          "a live source rebound with .data =: a view of its own memory (other shape, stride or dtype), "
          "other memory of the same layout, or another window of the same storage")
def _reinterpreted(make_cache):
    probe = Probe(make_cache(max_size=2))
    rebinds = (("shape (4,4) -> (2,4)", lambda t: t[:2]),
               ("stride (4,1) -> (1,4)", lambda t: t.t()),
               ("dtype float32 -> int32", lambda t: t.view(torch.int32)),
               ("address: other memory, same layout", lambda t: _content(20, shape=(4, 4))))
    sources = [_content(8 + i, shape=(4, 4)) for i in range(len(rebinds))]  # all alive throughout
    probe.begin()
    for (label, rebind), src in zip(rebinds, sources):
        probe.lookup(src, f"{label}: before")
        src.data = rebind(src)  # same address, same version counter, new layout
        probe.lookup(src, f"{label}: after")
    rows = _content(12, shape=(4, 4))
    src = rows[:2].clone()  # a live source moved between two windows of one storage
    src.data = rows[:2]
    probe.lookup(src, "offset: rows 0-1")
    src.data = rows[2:]  # same storage, shape, stride, dtype and version; another address
    probe.lookup(src, "offset: rows 2-3 of the same storage")
    probe.end()
    return probe.verdict()


@scenario("conj_and_neg_views", 0,
          "a complex source and its conj() view, their .imag views (neg bit), and a live source rebound to its "
          "own conj: same address, layout and version, other values")
def _conj_views(make_cache):
    probe = Probe(make_cache(max_size=8))
    a = _content(90, dtype=torch.complex64)
    views = {"a": a, "a.conj()": a.conj(), "a.imag": a.imag, "a.conj().imag (neg bit)": a.conj().imag}
    probe.begin()
    for rnd in range(2):
        for label, v in views.items():
            probe.lookup(v, f"{label} round {rnd}", expect_hit=rnd > 0)
    b = _content(91, dtype=torch.complex64)
    probe.lookup(b, "b before")
    b.data = b.conj()  # the same object now reads conjugated values
    probe.lookup(b, "b after b.data = b.conj()")
    probe.end()
    return probe.verdict()


def _dataless_pairs():
    """Pairs of tensors of one kind and shape, other content, outside plain strided
    tensors: their data_ptr(), shape and stride do not locate their data (or raise)."""
    from torch.testing._internal.two_tensor import TwoTensor  # a wrapper subclass torch keeps for tests

    def rows(seed):
        return [_content(seed, shape=(2, 4)), _content(seed + 1, shape=(3, 4))]

    return {
        "wrapper subclass (data_ptr 0)": lambda seed: TwoTensor(_content(seed, (4,)), _content(seed + 1, (4,))),
        "jagged nested tensor": lambda seed: torch.nested.nested_tensor(rows(seed), layout=torch.jagged),
        "strided nested tensor": lambda seed: torch.nested.nested_tensor(rows(seed)),
        "sparse COO tensor": lambda seed: _content(seed, (4, 4)).to_sparse(),
        "sparse CSR tensor": lambda seed: _content(seed, (4, 4)).to_sparse_csr(),
        "meta tensor": lambda seed: torch.empty((4, 4), device="meta"),
        "quantized tensor": lambda seed: torch.quantize_per_tensor(_content(seed, (4, 4), torch.float32),
                                                                   0.1 * (seed % 7 + 1), 0, torch.qint8),
    }


@scenario("dataless_sources", 0,
          "wrapper subclasses, nested, sparse, meta and quantized tensors: two of a kind with other content must "
          "not share an entry (refusing them with any exception is safe)")
def _dataless(make_cache):
    """Only a false hit fails: an exception on a tensor outside plain strided ones is
    a refusal, safe, and the trial's evidence lists each with the exception's type
    (the audit's robustness table). A hang or an exit is still broken."""
    cache = make_cache(max_size=4)
    false_hits, refused, handled = [], {}, {}
    for kind, make in _dataless_pairs().items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # "prototype", "beta", "deprecated": beside the point here
            a, b = make(120), make(130)
        tag_a, tag_b = torch.tensor([1.0]), torch.tensor([2.0])
        try:
            request_begins(cache)
            if cache.get(a) is None:
                cache.put(a, tag_a)
            got = cache.get(b)
            if got is None:
                cache.put(b, tag_b)
            elif got is tag_a or (isinstance(got, torch.Tensor) and torch.equal(got, tag_a)):
                false_hits.append(kind)
            request_ends(cache)
            handled[kind] = "false hit" if kind in false_hits else "kept apart"
        except CacheCallFailed as exc:
            if not exc.raised:
                raise  # hung or exited: broken, as on any other source
            refused[kind] = handled[kind] = f"refused ({exc})"
    evidence = {"robustness": handled}
    if false_hits:
        return Trial(FALSE_HIT, "one tensor's value returned for another of the same kind: " + _first(false_hits),
                     evidence=evidence)
    detail = f"refused {len(refused)} of {len(handled)} kinds (safe)" if refused else ""
    return Trial(PASS, detail, evidence=evidence)


@scenario("in_place_update", 0, "a live source updated in place (version bump) mid-request")
def _in_place(make_cache):
    probe = Probe(make_cache(max_size=2))
    src = _content(7)
    probe.begin()
    probe.lookup(src, "before update")
    with torch.no_grad():
        src.add_(1.0)
    probe.lookup(src, "after add_")
    probe.lookup(src, "after add_, again", expect_hit=True)
    probe.end()
    return probe.verdict()


@scenario("persistent_buffer", 0, "one input buffer refilled per request with copy_ (version bumps)")
def persistent_buffer(make_cache):
    probe = Probe(make_cache(max_size=2))
    buf = torch.empty(SHAPE)
    for req in range(3):
        probe.begin()
        with torch.no_grad():
            buf.copy_(_content(100 + req))
        for step in range(2):
            probe.lookup(buf, f"request {req} step {step}", expect_hit=step > 0)
        probe.end()
    return probe.verdict(evidence={"address": hex(buf.data_ptr()), "how": "one buffer for all requests"},
                         address_reused=True)


# --- freed and reused addresses: the seed's bug ------------------------------

def _freed_then_reused(make_cache, inference: bool) -> Trial:
    probe = Probe(make_cache(max_size=2))
    arena = AddressArena(SHAPE)
    with torch.inference_mode(inference):
        a = arena.fresh(_content(10))
        probe.begin()
        probe.lookup(a, "request A step 0")
        probe.lookup(a, "request A step 1", expect_hit=True)
        probe.end()
        del a  # request A ends; its source is freed
        b = arena.fresh(_content(11))
        reused = b.data_ptr() == arena.address
        probe.begin()
        probe.lookup(b, "request B step 0")
        probe.lookup(b, "request B step 1", expect_hit=True)
        probe.end()
    return probe.verdict(address_reused=reused,
                         evidence=_forced_evidence(arena, "request A", "request B"))


@scenario("dropped_view_base_rewritten_freed", 1,
          "a cached view dropped, its base rewritten in place, then freed; a fresh tensor takes its address")
def _view_dropped(make_cache):
    probe = Probe(make_cache(max_size=2))
    arena = AddressArena(SHAPE)
    base = arena.fresh(_content(20))
    probe.begin()
    probe.lookup(base.view(SHAPE), "request A step 0 (a view, dropped at once)")
    probe.lookup(base.view(SHAPE), "request A step 1 (a new view)")
    with torch.no_grad():
        base.mul_(2)  # a write through the base: every view of it sees the version bump
    probe.lookup(base.view(SHAPE), "request A step 2 (base rewritten in place)")
    probe.end()
    del base
    b = arena.fresh(_content(21))
    probe.begin()
    probe.lookup(b.view(SHAPE), "request B step 0 (a view of the tensor at the old address)")
    probe.end()
    return probe.verdict(address_reused=b.data_ptr() == arena.address,
                         evidence=_forced_evidence(arena, "request A (views of it)", "request B"))


@scenario("freed_address_reused", 1, "source freed, a fresh tensor of the next request at its address")
def freed_address_reused(make_cache):
    return _freed_then_reused(make_cache, inference=False)


@scenario("inference_freed_reused", 1, "the same, with inference-mode tensors (no version counter)")
def _inference_freed(make_cache):
    return _freed_then_reused(make_cache, inference=True)


@scenario("freed_id_and_address_reused", 1,
          "source freed; the next tensor gets its address *and* its Python id()")
def _freed_id(make_cache, attempts: int = 20):
    probe = Probe(make_cache(max_size=2))
    arena = AddressArena(SHAPE)
    same_id = 0
    padding = []  # live objects that shift where the next tensor object lands, attempt by attempt
    for attempt in range(attempts):  # CPython usually hands the freed object's memory to the next one
        padding.extend(torch.empty(0) for _ in range(attempt))
        a = arena.fresh(_content(200 + attempt))
        probe.begin()
        probe.lookup(a, f"attempt {attempt} request A")
        probe.end()
        old_id = int(id(a))  # a bare number: meeting it again in b is what is counted
        make_b = arena.prepare(_content(300 + attempt))  # a is not looked up again
        del a
        b = make_b()
        same = int(id(b)) == old_id
        same_id += same
        probe.begin()
        probe.lookup(b, f"attempt {attempt} request B" + (" (same id)" if same else ""))
        probe.end()
        del b
        if same_id:
            break
    evidence = {**_forced_evidence(arena, "request A", "request B"), "same_id_attempts": f"{same_id}/{attempt + 1}"}
    if not same_id:
        return Trial(INCONCLUSIVE, f"CPython reused no freed tensor's id in {attempts} attempts",
                     address_reused=True, evidence=evidence, hits=probe.hits, misses=probe.misses)
    return probe.verdict(address_reused=True, evidence=evidence)


@scenario("source_dies_during_eviction", 1,
          "a source whose last reference was a cached value dies inside put(); the next request's tensor gets "
          "its address and its id")
def _dies_during_eviction(make_cache, attempts: int = 20):
    cache = make_cache(max_size=2)
    arena = AddressArena(SHAPE)
    padding, found, same_id = [], [], 0
    for attempt in range(attempts):  # CPython usually hands the freed object's memory to the next one
        padding.extend(torch.empty(0) for _ in range(attempt))
        a = arena.fresh(_content(400 + attempt))
        holder, third = _content(500 + attempt), _content(600 + attempt)
        request_begins(cache)
        cache.put(holder, a[:])  # this value, a view, is what keeps `a` alive below
        cache.put(a, project(a))
        request_ends(cache)
        old_id, third_value = int(id(a)), project(third)  # a bare number: meeting it again is what is counted
        make_b = arena.prepare(_content(700 + attempt))
        del a
        request_begins(cache)
        cache.put(third, third_value)  # evicts holder's entry: `a` dies inside the cache's own call
        b = make_b()
        same = int(id(b)) == old_id
        same_id += same
        value_b = cache.get(b)
        request_ends(cache)
        if value_b is not None and not torch.equal(value_b, project(b)):
            found.append(f"attempt {attempt}" + (" (same id)" if same else ""))
        del b, holder, third
        cache.clear()
        if same_id or found:
            break
    evidence = {**_forced_evidence(arena, "a source evicted inside put()", "the next request"),
                "same_id_attempts": f"{same_id}/{attempt + 1}"}
    if found:
        return Trial(FALSE_HIT, "the dead source's value was returned at: " + _first(found),
                     address_reused=True, evidence=evidence)
    if not same_id:
        return Trial(INCONCLUSIVE, f"CPython reused no freed tensor's id in {attempts} attempts",
                     address_reused=True, evidence=evidence)
    return Trial(PASS, address_reused=True, evidence=evidence)


@scenario("natural_reuse", 1, "free and allocate as a server does; the allocator decides")
def natural_reuse(make_cache, requests: int = 24):
    probe = Probe(make_cache(max_size=2))
    weight = torch.randn(SHAPE[-1], SHAPE[-1])
    reuses = []
    recent: list[int] = []  # addresses the last two requests freed: their entries are still cached
    for req in range(requests):
        probe.begin()
        src = torch.randn(SHAPE) @ weight  # a fresh encoder output, as a server makes one
        address = int(src.data_ptr())  # bare numbers: finding a freed address again is what is counted
        if address in recent:
            back = len(recent) - recent.index(address)
            reuses.append(f"request {req} got the address request {req - back} freed")
        probe.lookup(src, f"request {req} step 0")
        probe.lookup(src, f"request {req} step 1", expect_hit=True)
        probe.end()
        recent = (recent + [address])[-2:]
        del src
    evidence = {"how": "natural", "requests": requests, "reused": len(reuses), "examples": reuses[:3]}
    if not reuses:
        return Trial(INCONCLUSIVE, f"the allocator reused no address in {requests} requests",
                     address_reused=False, evidence=evidence, hits=probe.hits, misses=probe.misses)
    return probe.verdict(address_reused=True, evidence=evidence)


@scenario("cfg_two_sources", 1, "positive and negative prompt per request, max_size=2, addresses reused")
def _cfg(make_cache):
    probe = Probe(make_cache(max_size=2))
    pos_arena, neg_arena = AddressArena(SHAPE), AddressArena(SHAPE)
    for req in range(3):
        pos, neg = pos_arena.fresh(_content(20 + req)), neg_arena.fresh(_content(40 + req))
        probe.begin()
        for step in range(3):
            probe.lookup(pos, f"request {req} positive step {step}", expect_hit=step > 0)
            probe.lookup(neg, f"request {req} negative step {step}", expect_hit=step > 0)
        probe.end()
        del pos, neg
    return probe.verdict(address_reused=True, evidence={
        "address": f"{hex(pos_arena.address)}, {hex(neg_arena.address)}", "freed_by": "request n",
        "reused_by": "request n+1", "how": "forced, two sources per request"})


# --- a live source whose storage changed --------------------------------------

@scenario("storage_swapped", 2, "live source rebound with set_(); a fresh tensor takes its old address")
def storage_swapped(make_cache):
    probe = Probe(make_cache(max_size=2))
    arena = AddressArena(SHAPE)
    a = arena.fresh(_content(12))
    probe.begin()
    probe.lookup(a, "request A step 0")
    probe.lookup(a, "request A step 1", expect_hit=True)
    probe.end()
    a.set_(torch.empty(SHAPE))  # a lives on (so does its weakref); its old address is released
    b = arena.fresh(_content(13))
    probe.begin()
    probe.lookup(b, "request B step 0")
    probe.end()
    return probe.verdict(address_reused=b.data_ptr() == arena.address,
                         evidence=_forced_evidence(arena, "request A (set_ while alive)", "request B"))


@scenario("storage_rebound", 2, "live source rebound with .data = other (no version bump); its old address reused")
def _storage_rebound(make_cache):
    probe = Probe(make_cache(max_size=2))
    arena = AddressArena(SHAPE)
    a = arena.fresh(_content(14))
    probe.begin()
    probe.lookup(a, "request A step 0")
    probe.end()
    a.data = torch.empty(SHAPE)  # unlike set_(), this does not even bump a._version
    b = arena.fresh(_content(15))
    probe.begin()
    probe.lookup(b, "request B step 0")
    probe.end()
    return probe.verdict(address_reused=b.data_ptr() == arena.address,
                         evidence=_forced_evidence(arena, "request A (.data= while alive)", "request B"))


@scenario("rebound_away_and_back", 2,
          "live source rebound away (.data = tmp), a fresh tensor at its old address, source rebound to it: "
          "same object, address, layout and version")
def _rebound_back(make_cache):
    probe = Probe(make_cache(max_size=2))
    arena = AddressArena(SHAPE)
    a = arena.fresh(_content(16))
    probe.begin()
    probe.lookup(a, "request A step 0")
    probe.end()
    a.data = torch.empty(SHAPE)  # away: a's storage goes, its address is free
    fresh = arena.fresh(_content(17))  # the next request's tensor at the old address
    a.data = fresh  # and back: .data = bumps no version
    del fresh
    probe.begin()
    probe.lookup(a, "request B step 0 (same object, rebound back)")
    probe.end()
    return probe.verdict(address_reused=a.data_ptr() == arena.address,
                         evidence=_forced_evidence(arena, "request A (.data= away)", "request B (.data= back)"))


@scenario("rebound_back_through_older_entry", 2,
          "a live source cached under two layouts, rebound away and back to the first: the lookup meets the "
          "older entry, not the newest")
def _rebound_back_older(make_cache):
    probe = Probe(make_cache(max_size=4))
    arena = AddressArena((4, 8))
    a = arena.fresh(_content(18, shape=(4, 8)))
    probe.begin()
    probe.lookup(a, "request A as (4, 8)")
    a.data = a.view(8, 4)  # a second key for the same object
    probe.lookup(a, "request A as (8, 4)")
    probe.end()
    a.data = torch.empty(4, 8)
    fresh = arena.fresh(_content(19, shape=(4, 8)))
    a.data = fresh  # back to the first key's address, layout and version
    del fresh
    probe.begin()
    probe.lookup(a, "request B as (4, 8), rebound back")
    probe.end()
    return probe.verdict(address_reused=a.data_ptr() == arena.address,
                         evidence=_forced_evidence(arena, "request A (two layouts)", "request B (.data= back)"))


@scenario("module_dtype_round_trip", 2,
          "a cached weight after module.half().float(): rebound twice with .data =, rounded, and often back at "
          "its old address (natural)")
def _dtype_round_trip(make_cache, attempts: int = 20):
    probe = Probe(make_cache(max_size=2))
    reused = 0
    for attempt in range(attempts):
        layer = torch.nn.Linear(64, 64, dtype=torch.float32)  # float32 weights: half() rounds them
        weight = layer.weight
        with torch.no_grad():
            probe.begin()
            probe.lookup(weight, f"attempt {attempt}: weight before")
            probe.end()
            old = int(weight.data_ptr())  # a bare number: the weight landing there again is what is counted
            layer.half().float()  # the float32 weight now holds rounded values
            if int(weight.data_ptr()) == old:
                reused += 1
                probe.begin()
                probe.lookup(weight, f"attempt {attempt}: weight after half().float(), at its old address")
                probe.end()
        del layer, weight
        if reused:
            break
    evidence = {"how": "natural", "attempts": attempt + 1, "reused": reused}
    if not reused:
        return Trial(INCONCLUSIVE, f"the weight never came back to its old address in {attempts} round trips",
                     address_reused=False, evidence=evidence, hits=probe.hits, misses=probe.misses)
    return probe.verdict(address_reused=True, evidence=evidence)


# --- content rewritten with no version bump -----------------------------------

@scenario("persistent_buffer_inference", 3,
          "one inference-mode buffer refilled per request: same address, no version, live referent")
def persistent_buffer_inference(make_cache):
    probe = Probe(make_cache(max_size=2))
    with torch.inference_mode():
        buf = torch.empty(SHAPE)
        for req in range(3):
            probe.begin()
            buf.copy_(_content(200 + req))
            for step in range(2):
                probe.lookup(buf, f"request {req} step {step}", expect_hit=step > 0)
            probe.end()
    return probe.verdict(address_reused=True,
                         evidence={"address": hex(buf.data_ptr()), "how": "one buffer, refilled in place"})


@scenario("storage_resized_regrown", 3,
          "a live source's storage resized to zero and regrown (the FSDP free/realloc pattern), refilled through "
          "another tensor: same storage, often the same address, no version bump")
def _resized_regrown(make_cache, attempts: int = 20):
    probe = Probe(make_cache(max_size=2))
    reused = 0
    for attempt in range(attempts):  # the allocator decides whether the regrown storage lands where it was
        src = _content(84 + attempt, shape=(64, 64))
        probe.begin()
        probe.lookup(src, f"attempt {attempt}: request A step 0")
        probe.end()
        old, storage = src.data_ptr(), src.untyped_storage()
        nbytes = storage.nbytes()
        storage.resize_(0)
        storage.resize_(nbytes)
        refill = torch.empty(0).set_(storage, 0, src.shape, src.stride())  # its own version counter, not src's
        with torch.no_grad():
            refill.copy_(_content(184 + attempt, shape=(64, 64)))
        del refill, storage
        if src.data_ptr() == old:
            reused += 1
            probe.begin()
            probe.lookup(src, f"attempt {attempt}: request B step 0 (regrown at its old address, refilled)")
            probe.end()
            break
    evidence = {"how": "natural: storage resized to 0 and regrown", "attempts": attempt + 1, "reused": reused}
    if not reused:
        return Trial(INCONCLUSIVE, f"the regrown storage never came back to its old address in {attempts} tries",
                     address_reused=False, evidence=evidence, hits=probe.hits, misses=probe.misses)
    return probe.verdict(address_reused=True, evidence=evidence)


@scenario("rewritten_through_alias", 3,
          "a live source rewritten through an alias of its memory with its own version counter (DLPack, "
          "another framework, a graph's static input)")
def _rewritten_through_alias(make_cache):
    probe = Probe(make_cache(max_size=2))
    src = _content(86)
    alias = torch.utils.dlpack.from_dlpack(torch.utils.dlpack.to_dlpack(src))
    probe.begin()
    probe.lookup(src, "request A step 0")
    probe.end()
    with torch.no_grad():
        alias.copy_(_content(87))  # bumps alias's version, not src's
    probe.begin()
    probe.lookup(src, "request B step 0 (rewritten through the alias)")
    probe.end()
    return probe.verdict(address_reused=True,
                         evidence={"address": hex(src.data_ptr()), "how": "one memory, rewritten through an alias"})


@scenario("rebound_back_to_a_rewritten_buffer", 3,
          "a live source rebound away from a persistent buffer, the buffer rewritten through itself, the source "
          "rebound back (swap-out and restore, vector_to_parameters): same storage, address, layout and version")
def _rebound_back_rewritten(make_cache):
    probe = Probe(make_cache(max_size=2))
    buffer = _content(88)  # a flat parameter, a persistent input buffer: it outlives the swap
    src = torch.empty(0)
    src.data = buffer
    probe.begin()
    probe.lookup(src, "request A step 0")
    probe.end()
    src.data = torch.empty(SHAPE)  # swapped out
    with torch.no_grad():
        buffer.copy_(_content(89))  # bumps buffer's version counter; src has its own, untouched
    src.data = buffer  # restored: the very storage it had, other content
    probe.begin()
    probe.lookup(src, "request B step 0 (restored onto the rewritten buffer)")
    probe.end()
    return probe.verdict(address_reused=True,
                         evidence={"address": hex(buffer.data_ptr()), "how": "one buffer, rewritten while swapped out"})


# --- the cache contract --------------------------------------------------------

def _contract(checks: list[tuple[bool, str]]) -> Trial:
    failed = [msg for ok, msg in checks if not ok]
    return Trial(BROKEN, "; ".join(failed)) if failed else Trial(PASS)


def _hit(cache, src, value) -> bool:
    got = cache.get(src)
    return got is not None and torch.equal(got, value)


@scenario("lru_recency", 0, "max_size=2: a lookup refreshes an entry; the least recently used goes", contract="lru")
def _lru(make_cache):
    cache = make_cache(max_size=2)
    a, b, c = _content(30), _content(31), _content(32)
    cache.put(a, project(a))
    cache.put(b, project(b))
    touched = _hit(cache, a, project(a))
    cache.put(c, project(c))
    return _contract([(touched, "a fresh entry missed"),
                      (cache.get(b) is None, "least recently used entry (b) was kept"),
                      (_hit(cache, a, project(a)), "recently used entry (a) was evicted"),
                      (_hit(cache, c, project(c)), "newest entry (c) missing")])


@scenario("size_bound", 0, "never more than max_size entries; the newest are kept", contract="bounded")
def _bound(make_cache):
    cache = make_cache(max_size=3)
    sources = [_content(50 + i) for i in range(10)]
    sizes = []
    for s in sources:
        cache.put(s, project(s))
        sizes.append(len(cache))
    return _contract([(max(sizes) <= 3, f"size reached {max(sizes)} > max_size 3"),
                      (all(_hit(cache, s, project(s)) for s in sources[-3:]), "one of the 3 newest entries missing")])


@scenario("overwrite", 0, "put twice for one source: the second value wins, one entry", contract="bounded")
def _overwrite(make_cache):
    cache = make_cache(max_size=2)
    src = _content(60)
    first, second = project(src), project(src) + 1
    cache.put(src, first)
    cache.put(src, second)
    got = cache.get(src)
    return _contract([(got is not None and torch.equal(got, second), "first value returned after overwrite"),
                      (len(cache) == 1, f"{_count(len(cache), 'entry')} held after putting one source twice")])


@scenario("clear", 0, "clear() empties the cache", contract="bounded")
def _clear(make_cache):
    cache = make_cache(max_size=2)
    a, b = _content(61), _content(62)
    cache.put(a, project(a))
    cache.put(b, project(b))
    cache.clear()
    return _contract([(len(cache) == 0, f"{_count(len(cache), 'entry')} held after clear()"),
                      (cache.get(a) is None and cache.get(b) is None, "hit after clear()")])


@scenario("no_keepalive", 0, "the cache never keeps a source alive")
def _no_keepalive(make_cache):
    cache = make_cache(max_size=2)
    src = _content(63)
    cache.put(src, project(src))
    cache.get(src)
    alive = weakref.ref(src)
    del src
    if alive() is not None:  # held, or only by garbage: a full collection (slow, in a large process) tells
        gc.collect()
    return _contract([(alive() is None, "source still alive after its last reference was dropped")])


@scenario("memory_held", 1, "after 200 requests whose sources are freed, at most max_size values are held",
          contract="bounded")
def _memory_held(make_cache):
    held = values_held(make_cache, requests=200, max_size=2)
    return _contract([(held["peak_values"] <= 2, f"held {held['peak_values']} values at once, max_size 2"),
                      (held["kept_sources"] == 0, f"kept {held['kept_sources']} freed sources alive")])


def values_held(make_cache, requests: int, max_size: int) -> dict:
    """Serve ``requests`` requests (two sources each, freed after the request) and
    count, by weak references, the values and sources the cache keeps alive."""
    cache = make_cache(max_size=max_size)
    value_refs: list = []
    peak_values = peak_bytes = kept_sources = 0
    for _ in range(requests):
        request_begins(cache)
        sources = [torch.randn(SHAPE) for _ in range(2)]
        for _ in range(3):
            for src in sources:
                if cache.get(src) is None:
                    value = project(src)
                    cache.put(src, value)
                    value_refs.append(weakref.ref(value))
                    del value
        request_ends(cache)
        source_refs = [weakref.ref(s) for s in sources]
        del sources, src
        kept_sources += sum(r() is not None for r in source_refs)
        value_refs = [r for r in value_refs if r() is not None]
        peak_values = max(peak_values, len(value_refs))
        peak_bytes = max(peak_bytes, sum(r().nbytes for r in value_refs if r() is not None))
    fresh = torch.randn(SHAPE)
    cache.put(fresh, project(fresh))  # the next insert: dead sources' values should go now
    return {"peak_values": peak_values, "peak_bytes": peak_bytes, "kept_sources": kept_sources,
            "stale_values_after_next_insert": sum(r() is not None for r in value_refs), "len": len(cache)}


@scenario("lazy_stale_eviction", 1, "a lookup that meets a dead source's entry removes it", contract="bounded")
def _lazy(make_cache):
    checks = []
    for dies_inside_put in (False, True):
        cache = make_cache(max_size=2)
        arena = AddressArena(SHAPE)
        a, holder, other = arena.fresh(_content(64)), _content(66), _content(67)
        if dies_inside_put:  # the cache's own call drops the last reference: it dies with the lock held
            cache.put(holder, a[:])
        cache.put(a, project(a))
        del a
        if dies_inside_put:
            cache.put(other, project(other))  # evicts holder's entry, and with it `a`
        b = arena.fresh(_content(65))  # the next tensor at the dead source's address
        got = cache.get(b)
        held, live = len(cache), int(dies_inside_put)
        how = "dying inside put()" if dies_inside_put else "freed"
        checks += [(got is None, f"the dead source's value was returned ({how})"),
                   (held == live, f"the dead entry ({how}) is still there after the lookup that met it "
                                  f"({_count(held, 'entry')} held, {live} live)")]
    return _contract(checks)


@scenario("proactive_stale_eviction", 1, "an insert drops dead entries before evicting a live one",
          contract="bounded")
def _proactive(make_cache):
    cache = make_cache(max_size=2)
    a, b, c = _content(66), _content(67), _content(68)
    cache.put(a, project(a))
    cache.put(b, project(b))
    cache.get(a)  # a is now most recent, b least recent
    del a
    cache.put(c, project(c))
    return _contract([(_hit(cache, b, project(b)), "live entry b was evicted while a dead entry stayed"),
                      (_hit(cache, c, project(c)), "new entry c missing"),
                      (len(cache) == 2, f"{_count(len(cache), 'entry')} held, 2 live")])


def fails_level(s: Scenario, trial: Trial) -> bool:
    """Does this outcome keep a cache from reaching the scenario's level? Only
    safety scenarios decide levels."""
    if s.contract is not None:
        return False
    return trial.status in (FALSE_HIT, BROKEN) or (trial.status == WRONG_MISS and not s.advisory)


def applies(s: Scenario, contract: str) -> bool:
    """Does the chosen contract ask for this hygiene check?"""
    return s.contract is not None and CONTRACTS.index(contract) >= CONTRACTS.index(s.contract)


def fails_contract(s: Scenario, trial: Trial, contract: str) -> bool:
    """Does this outcome break the chosen contract?"""
    return applies(s, contract) and trial.status in (FALSE_HIT, BROKEN, WRONG_MISS)


def reached_level(results: list[tuple[Scenario, Trial]]) -> Level | None:
    """Highest level L such that no safety scenario at L or below failed; None when
    even L0 fails. Inconclusive trials neither pass nor fail a level."""
    return level_below([s.level for s, t in results if fails_level(s, t)])


def run_scenario(s: Scenario, make_cache, grad_mode: str | None = "no_grad",
                 timeout: float | None = DEFAULT_TIMEOUT, unsupported: frozenset = frozenset()) -> Trial:
    """Run one scenario against a cache factory. Every call into the cache goes
    through the guard (in ``grad_mode``, within ``timeout`` seconds), so whatever
    the cache does becomes a broken trial, never an escape. A scenario that needs
    a dtype in ``unsupported`` is inconclusive: it tested nothing."""
    try:
        return s.run(guarded(make_cache, timeout=timeout, grad_mode=grad_mode, unsupported=unsupported))
    except NotTested as exc:
        return Trial(INCONCLUSIVE, f"not tested: {exc}")
    except CacheCallFailed as exc:
        return Trial(BROKEN, str(exc))
    except Exception as exc:  # noqa: BLE001 - e.g. a value of the wrong kind met by the check
        return Trial(BROKEN, f"the scenario failed around the cache: {type(exc).__name__}: {exc}")
