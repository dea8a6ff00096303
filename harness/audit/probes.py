"""The audit's systematic phase: every obligation of a level, in situations that meet
every pair of property values.

The search (``harness/audit/search.py``) draws its sources and histories at random, so a
guard that fails only when two properties hold at once is found only if a draw
happens to combine them. This phase lays the properties out instead: ``PROPERTIES``
lists what a source can vary (shape, dtype, memory layout, offset into its storage,
lazy conj/neg bits, storage origin, whether it is all of its storage, kind of tensor
object, its values), how it is looked up (grad mode, thread, the source itself or a new
object on its storage, hits before it changes), the process-wide torch settings, and the
cache it meets (max_size, what it went through first, inserts between a source's put and
its change). :func:`situations` is a covering array over them: any value of any property
meets any value of any other in some row; ahead of those rows, ``EVERYDAY`` holds the
plain pipeline case whole; after them, :func:`triples` meets every value with every pair of
a dtype and a rank. Each row then runs every obligation of the level
on sources of that situation: an in-place write misses, and so does a lazy bit turned over in
place; a tensor on the same storage
that differs from the cached one in one key field alone (address, shape, stride,
dtype, conj or neg bit) misses; a freed source's address handed to the next request's
tensor misses (L1); a source whose storage was swapped, or rebound away and back,
misses, and so does a source written in place and looked up through an older object
on its storage (L2); a rewrite with no version bump misses in the next request (L3). With a
contract it also checks the bound after every insert, LRU recency (its hit after the
row's elapsed time) and ``clear()``.

So a guard skipped only when one or two of these properties hold is met, in every
row where they do, by the obligation it protects. Every step is plain Python run as
written, so a failure is a runnable snippet: the row's steps up to the one that failed.
A trial where the allocator did not put the next tensor at the freed address is
inconclusive, counted and said, never a pass.
"""

from __future__ import annotations

import functools
import itertools
import math
import random
import time
from dataclasses import dataclass

import torch

from cache_impl import Level
from cache_impl.registry import alarm_handler
from harness.audit.dtypes import DTYPES, alike, gradable, name_of, readable
from harness.audit.search import (EXAMPLES, GRAD_MODES, HELPERS, KINDS, ORIGINS, SearchFailure,
                                  allowed_dtypes, bind_factory, other_order, run_code, search, thread_limit)
from repro.guard import DEFAULT_TIMEOUT

SHAPES = {"scalar": (), "vector": (5,), "matrix": (4, 8), "odd": (3, 5, 7), "unit dim": (1, 6),
          "4d": (2, 3, 2, 2), "4d odd": (3, 3, 1, 5), "5d": (1, 2, 3, 2, 2), "5d odd": (3, 1, 3, 1, 5),
          "6d": (1, 2, 1, 3, 1, 2), "8d": (1, 2, 1, 2, 1, 2, 1, 3), "square": (5, 5), "wide": (2, 1025),
          "text embedding": (2, 77, 768),  # a text encoder's output, with CFG
          "large odd": (3, 37, 37),
          # an image latent (channels_last meets more than 4,096 elements) and a video latent (channels_last_3d)
          "image latent": (1, 4, 64, 64), "video latent": (1, 4, 5, 32, 32)}
# Memory layouts, with the ranks each exists in.
LAYOUTS = {"contiguous": range(0, 9), "transposed": range(2, 9), "every other": range(1, 9),
           "expanded": range(1, 9), "channels_last": (4,), "channels_last_3d": (5,)}
# Elements into its storage: 16 is a multiple of every item size, 33 is odd, and the last a view
# deep into one large buffer (its storage past 2**25 bytes; only what it reads is written).
OFFSETS = ("0", "16", "33", "2**25 + 1")
# A long prompt's embedding or a video latent has tens of millions of elements. A source "past
# 2**24" is the row's shape behind one more, leading dimension of stride 0, just long enough and
# odd (the parity of the element count stays): it has that many elements and costs what it spans
# (its value is computed once along it). Not for rank 0, which it would change; a vector is
# itself made that long, of stride 0 (rank 1 stays).
SIZES = ("as shaped", "past 2**24, broadcast")
PERIOD = 251 * 7 * 11  # a source's values repeat after this many items: counting's 251, NaN every 7th, inf every 11th
# What the cache went through first: entries held (None: max_size); "long": 1,000 others
# inserted (most evicted, in a small cache), then 110 lookups; "cleared": 60 held, then clear().
# One row alone (LONG_LIVED) has the longest: a long-running server's cache, its count of calls
# past 16 bits (an implementation may keep one), inserted as "long" inserts.
LONGEST = "2**16 + 5 inserts"
HISTORIES = {"new": 0, "60 held": 60, "full": None, "long": 0, "cleared": 60, LONGEST: 0}
INSERTS = {"long": 1000, LONGEST: 2**16 + 5}
# A long-running server's cache holds tens of thousands of entries. One larger than FILLED is met
# new, with 60 held, cleared or after 1,000 inserts, never filled to its bound (nor for its
# recency) in the pairwise rows: filling it would cost a design whose put() is linear in the
# entries held minutes a row. One row (FILLED_LARGE) fills a cache just past 10,000 entries: the
# bound and recency of a cache that large are judged once, in the everyday case.
MAX_SIZES = (1, 2, 3, 17, 64, 128, 1024, 4096, 32768)
FILLED = 4096
FILLED_LARGE_SIZE = 10_001
PROPERTIES = {
    "dtype": DTYPES,
    "shape": tuple(SHAPES),
    "size": SIZES,
    "max_size": tuple(map(str, MAX_SIZES)),
    "kind": KINDS + ("requires_grad", "inference", "view", "grad view"),
    "layout": tuple(LAYOUTS),
    "history": tuple(h for h in HISTORIES if h != LONGEST),
    "origin": ORIGINS,
    "bits": ("none", "conj", "neg", "conj neg"),
    "grad": tuple(GRAD_MODES),
    "offset": OFFSETS,
    "thread": ("main", "other"),
    "lookup": ("the source", "a new object"),
    "hits": ("1", "20"),  # lookups of a source before it changes
    "age": ("0", "10"),  # other entries inserted between a source's put and its change
    # in-place writes between a source's put and its lookup: a long-running server's buffer is written
    # at every step; the counter is moved as by that many writes without making them (rewrite)
    "writes": ("1", "2**8", "2**16", "2**31"),
    # a source's version counter when it is put: a buffer a long-running server has written all along
    # (every other tensor object made on its storage for the row starts there too)
    "version": ("0", "2**16 + 3", "2**31 + 3"),
    # time between a source's put and its change, on the clock the cache reads (``time.time``,
    # ``monotonic``, ``perf_counter`` and their ``_ns`` forms, moved on during the cache's calls only):
    # a long-running server's entry is hours old; no wall-clock time passes
    "elapsed": ("0", "3 hours", "3 days"),
    "values": ("counting", "negative", "fractions", "nan and inf", "large"),  # what request n's source holds
    "storage": ("a larger buffer", "its own"),  # "its own": the source spans all of its storage
    # Process-wide settings a pipeline may change, one a row (autocast: in the row's calls).
    "torch state": ("defaults", "default dtype float64", "default dtype bfloat16", "deterministic algorithms",
                    "autocast", "intra-op threads"),
}
ELAPSED = {"0": 0, "3 hours": 3 * 3600, "3 days": 3 * 86400}  # seconds
GRAD_KINDS = ("requires_grad", "trainable_parameter", "grad view")  # kinds of tensor that require grad
VIEW_KINDS = ("view", "grad view")  # a view of another tensor object, which holds the storage too


def _possible(row: dict) -> bool:
    """Can one source and cache have all of ``row`` (a partial row: what it names)?"""
    dtype = getattr(torch, row["dtype"]) if "dtype" in row else None
    if "shape" in row and "layout" in row and len(SHAPES[row["shape"]]) not in LAYOUTS[row["layout"]]:
        return False
    if len(LAYOUTS.get(row.get("layout"), ())) == 1 and row.get("size", SIZES[0]) != SIZES[0]:
        return False  # a broadcast dimension in front changes the rank, the one rank this layout exists at
    if row.get("origin") == "shared_memory" and row.get("offset") == OFFSETS[-1]:
        return False  # torch reserves a shared segment's pages whole: 2**25 items would fill a container's /dev/shm
    if row.get("size") == SIZES[1] and (row.get("shape") == "scalar" or (
            row.get("shape") == "vector" and row.get("storage") == "a larger buffer")):
        # The scalar is the only rank 0, which a broadcast dimension would change. The vector is
        # itself broadcast (rank 1 stays): its stride variant reads all 2**24 items, written for
        # that variant alone in a storage of its own.
        return False
    if dtype is not None and "conj" in row.get("bits", "") and not dtype.is_complex:
        return False  # a real tensor's conjugate is itself: no conj bit
    if dtype is not None and not readable(row["dtype"], row.get("bits", "none")):
        return False  # torch cannot read this dtype negated (or, complex32, negated and conjugated)
    if row.get("kind") in GRAD_KINDS and dtype is not None and not gradable(dtype):
        return False
    if dtype is not None and row.get("values") == "negative" and not dtype.is_signed:
        return False  # no negative values to hold
    if dtype is not None and row.get("values") == "large" and (dtype.itemsize == 1 or dtype is torch.bool):
        return False  # no room above 1,000
    if dtype is not None and row.get("values") in ("fractions", "nan and inf") and not (
            dtype.is_floating_point or dtype.is_complex):
        return False
    if row.get("age") == "10" and "max_size" in row and int(row["max_size"]) <= 10:
        return False  # ten inserts after its put evict the source's entry: its obligations would test nothing
    if row.get("history") == "full" and "max_size" in row and FILLED < int(row["max_size"]) != FILLED_LARGE_SIZE:
        return False  # see MAX_SIZES
    return not (row.get("history") == "60 held" and "max_size" in row and int(row["max_size"]) < 64)


def rank_of(row: dict) -> int:
    """The rank of the row's source: its shape's, and one more where a broadcast dimension takes it
    past 2**24 elements (see SIZES; a vector stays one)."""
    shape = SHAPES[row["shape"]]
    return len(shape) + (row.get("size", SIZES[0]) != SIZES[0] and len(shape) > 1)


@functools.lru_cache(maxsize=None)
def situations(seed: int = 0) -> tuple:
    """Rows over ``PROPERTIES`` in which every possible pair of values meets (greedy,
    as AETG builds a pairwise covering array): each row starts from a pair no row
    has yet and takes, property by property, the value that meets most new pairs."""
    rng = random.Random(seed)
    names = list(PROPERTIES)
    uncovered = {(a, va, b, vb) for i, a in enumerate(names) for b in names[i + 1:]
                 for va in PROPERTIES[a] for vb in PROPERTIES[b] if _possible({a: va, b: vb})}
    rows = []
    while uncovered:
        a, va, b, vb = min(uncovered, key=lambda p: (names.index(p[0]), names.index(p[2]), p))
        row = {a: va, b: vb}
        rest = [n for n in names if n not in row]
        rng.shuffle(rest)
        for name in rest:
            def gain(value, name=name):
                return sum(((n, row[n], name, value) if names.index(n) < names.index(name)
                            else (name, value, n, row[n])) in uncovered for n in row)
            choices = [v for v in PROPERTIES[name] if _possible({**row, name: v})]
            best = max(gain(v) for v in choices)
            row[name] = rng.choice([v for v in choices if gain(v) == best])
        rows.append(row)
        uncovered -= {(x, row[x], y, row[y]) for i, x in enumerate(names) for y in names[i + 1:]}
    # Large caches last: their history is most of the time, and a failure shows sooner on the rest.
    return EVERYDAY + tuple(sorted(rows, key=lambda row: int(row["max_size"]) > 128)) + EXTREMES + triples() + formats() + LAST_ROWS


# The everyday case, whole (pairs of values do not make it: it is many properties at once):
# a text encoder's output or a projection of it, in the dtypes and grad modes pipelines
# serve in, a plain tensor that owns its storage, looked up at every step of a request.
_PLAIN = {"size": "as shaped", "layout": "contiguous", "offset": "0", "bits": "none", "origin": "allocator", "kind": "tensor",
          "thread": "main", "lookup": "the source", "hits": "20", "values": "counting", "storage": "its own",
          "torch state": "defaults", "history": "full", "age": "0", "writes": "1", "version": "0", "elapsed": "0"}
EVERYDAY = tuple({**_PLAIN, "dtype": dtype, "grad": grad, "shape": shape, "max_size": size}
                 for dtype in ("float32", "float16", "bfloat16") for grad in ("no_grad", "inference")
                 for shape, size in (("text embedding", "2"), ("matrix", "128")))
# Every dtype once more, the everyday case with each property that has a scale at its largest,
# all at once: a pairwise array meets two values in some row, but not a third with them (a float8
# source whose version is past 2**31, in a cache up a day; or in a video latent), and those are the
# conditions a long-running server meets together.
LARGEST = {"shape": "video latent", "size": SIZES[-1], "max_size": str(MAX_SIZES[-1]), "writes": PROPERTIES["writes"][-1],
           "version": PROPERTIES["version"][-1], "elapsed": PROPERTIES["elapsed"][-1],
           "age": PROPERTIES["age"][-1], "hits": PROPERTIES["hits"][-1], "offset": OFFSETS[-1],
           "history": "60 held"}
EXTREMES = tuple({**_PLAIN, "grad": "no_grad", "dtype": dtype, **LARGEST} for dtype in DTYPES)
# The everyday case in a cache of just past 10,000 entries, filled: the row's own sources go into
# it full (the bound checked at each insert), and its recency checks fill it again twice, once for a
# hit when full and once for a hit before. An implementation may change at a size no pairwise row fills.
FILLED_LARGE = {**_PLAIN, "grad": "no_grad", "dtype": "float32", "shape": "text embedding",
                "max_size": str(FILLED_LARGE_SIZE)}
LONG_LIVED = {**_PLAIN, "grad": "no_grad", "dtype": "bfloat16", "shape": "text embedding", "max_size": "64",
              "history": LONGEST}
# The everyday case with each source looked up 1,025 times before it changes: a buffer a server hits
# at every step of every request. The pairwise rows look a source up 20 times at most (each hit is
# checked against a value computed afresh: 1,025 of them in every row would cost minutes).
HIT_OFTEN = {**_PLAIN, "grad": "no_grad", "dtype": "float32", "shape": "matrix", "max_size": "128", "hits": "1025"}
# One row each, after every other: the two that go on in their cache (lived_on) come last.
LAST_ROWS = (HIT_OFTEN, FILLED_LARGE, LONG_LIVED)


def _every_value_with(fixed: dict, shapes: tuple = ()) -> list[dict]:
    """Rows that hold the values ``fixed`` names (and one of ``shapes`` each, in turn, if given), in
    which every value of every other property that can go with them meets them in one row or another."""
    names = [name for name in PROPERTIES if name not in fixed and not (shapes and name == "shape")]

    def fits(row: dict) -> bool:
        return any(_possible({**row, "shape": shape}) for shape in shapes) if shapes else _possible(row)
    unmet = [(name, value) for name in names for value in PROPERTIES[name] if fits({**fixed, name: value})]
    turn = itertools.cycle(shapes)
    rows = []
    while unmet:
        row = {**fixed, unmet[0][0]: unmet[0][1]}
        if shapes:  # the next of them that fits: they take turns
            row["shape"] = next(s for s in itertools.islice(turn, 2 * len(shapes)) if _possible({**row, "shape": s}))
        row = _completed(row, set(unmet))
        unmet = [pair for pair in unmet if row[pair[0]] != pair[1]]
        rows.append(row)
    return rows


def _completed(row: dict, wanted: set = frozenset()) -> dict:
    """``row`` with a value for every property it does not name: one of ``wanted`` (pairs of a
    property and a value) where one fits, else the first that fits; in the order of PROPERTIES."""
    row = dict(row)
    for name in PROPERTIES:
        if name not in row:
            choices = [v for v in PROPERTIES[name] if _possible({**row, name: v})]
            row[name] = next((v for v in choices if (name, v) in wanted), choices[0])
    return {name: row[name] for name in PROPERTIES}


def _lived_on(base: dict) -> tuple:
    """Situations ``base``'s cache meets after its own row, in turn: every value of every other
    property in one of them, at each of the cache's ages (a cache that changes once its count of
    calls passes 16 bits, or once it holds more than 10,000 entries, does so for every source that
    comes after, and may change again once it has been up an hour; the history is paid once)."""
    # Its clock only moves on: a young cache's situations first, then those that make it hours,
    # then days old (the first of each moves the clock, and the rest meet the cache at that age).
    return tuple(row for elapsed in PROPERTIES["elapsed"] for row in _every_value_with(
        {"max_size": base["max_size"], "history": base["history"], "elapsed": elapsed}))


LIVED_ON = _lived_on(LONG_LIVED)
FILLED_ON = _lived_on(FILLED_LARGE)

# Ranks a guard that tells ranks apart may split on: 0, 1, 2, 3 or 4, 5 and more; and the shapes of each.
RANK_GROUPS = {"rank 0": range(0, 1), "rank 1": range(1, 2), "rank 2": range(2, 3), "rank 3-4": range(3, 5),
               "rank 5+": range(5, 10)}
RANKS = {rank: tuple(name for name, shape in SHAPES.items() if len(shape) in ranks) for rank, ranks in RANK_GROUPS.items()}
# A small new cache: the cheapest row (no history, recency judged in 17 entries; 10 inserts age an entry).
SMALL_NEW = {"max_size": "17", "history": "new"}


@functools.lru_cache(maxsize=None)
def triples() -> tuple:
    """Rows in a small new cache in which every value of every other property meets every pair of a
    dtype and a rank: a triple of a dtype, a rank and one more value, which the pairwise rows meet
    only by chance (a guard skipped for rank-0 float32 inference tensors), meets in one of them."""
    rows = []
    for dtype in DTYPES:
        for rank, shapes in RANKS.items():
            # sources as shaped, so that each has the rank of its shape
            rows += _every_value_with({**SMALL_NEW, "dtype": dtype, "size": SIZES[0]}, shapes)
            # and one past 2**24, whose broadcast dimension makes it of this rank (one of a rank below)
            broadcast = ({**SMALL_NEW, "dtype": dtype, "size": SIZES[1], "shape": shape} for shape in SHAPES)
            first = next((row for row in broadcast if _possible(row) and rank_of(row) in RANK_GROUPS[rank]), None)
            rows += [_completed(first)] if first else []
    return tuple(rows)


# Memory formats that exist at one rank alone: a shape meets them only among that rank's few.
ONE_RANK_LAYOUTS = tuple(name for name, ranks in LAYOUTS.items() if len(ranks) == 1)


@functools.lru_cache(maxsize=None)
def formats() -> tuple:
    """Rows in a small new cache in which every value of every other property meets each memory
    format that exists at one rank alone, with each shape it exists in: a guard skipped for a
    channels_last source of an odd element count and one more value (a dtype, a young cache) meets
    it in one of them; the pairwise rows meet a format with a shape and a third value only by chance."""
    return tuple(row for layout in ONE_RANK_LAYOUTS for shape in SHAPES
                 if len(SHAPES[shape]) in LAYOUTS[layout]
                 for row in _every_value_with({**SMALL_NEW, "layout": layout, "shape": shape}))


def lived_on(row: dict, level: Level) -> tuple:
    """The situations the row's cache goes on with after the row: the long-lived cache's and the
    filled large cache's; none for the rest. The large cache is kept full, so it holds the entries
    of the situation before's sources, dead by then, at the addresses the next one's take: from L1
    only, which is where a dead source's entry must miss."""
    if row["history"] == LONGEST:
        return LIVED_ON
    return FILLED_ON if row["max_size"] == str(FILLED_LARGE_SIZE) and level >= Level.L1 else ()


PRELUDE = HELPERS + '''
arenas = {{}}  # slot -> the buffer its sources are made at (a fixed address within a row): one slot per obligation
in_use = {{}}  # slot -> a weak reference to the storage last made there
kept, fillers, inconclusive = [], [], []  # sources kept to the row's end; other entries of this row; unproven
# Other entries, (tensor, its value), each made once, when a row first needs it: a row's
# cache is new, so rows share them (and a row that fails early makes few).
pool = []
caches = [None]  # each row's cache, made anew


def begin():
    getattr(cache, "begin_request", lambda: None)()


def end():
    getattr(cache, "end_request", lambda: None)()


def memory_at(slot, s, nbytes):
    """A new storage object of ``nbytes`` at the slot's fixed address, as the allocator hands
    out a freed one (shared memory: a new segment, which the system maps where the last was)."""
    origin, inference = s["origin"], s["kind"] == "inference"
    if slot in in_use and not in_use[slot].expired():
        raise AssertionError("a freed source is still alive: the cache keeps it (or its storage) from being freed")
    with torch.inference_mode(inference):
        if origin == "shared_memory":  # made as share_memory_() makes one, without copying what nothing reads
            memory = torch.empty(0, dtype=torch.uint8).set_(torch.UntypedStorage._new_shared(nbytes))
        else:
            if slot not in arenas or arenas[slot].numel() < s["room"]:  # room for the row's widest variant
                arenas[slot] = unfilled(s["room"])
            memory = rewrapped(arenas[slot][:nbytes], origin)
    in_use[slot] = StorageWeakRef(memory.untyped_storage())
    return memory


def unfilled(nbytes):
    """A buffer whose pages nothing touches until a source is written there (with deterministic
    algorithms on, torch.empty fills what it makes: a large buffer would be written whole)."""
    fills = torch.utils.deterministic.fill_uninitialized_memory
    torch.utils.deterministic.fill_uninitialized_memory = False
    try:
        return torch.empty(nbytes, dtype=torch.uint8)
    finally:
        torch.utils.deterministic.fill_uninitialized_memory = fills


def on(x, s, **change):
    """A new tensor object on x's storage, with a version counter of its own: s's dtype,
    shape, stride and offset (with ``change`` to one of them), dressed as s's kind of
    object with s's lazy bit."""
    g = {{**s, **change}}
    with torch.inference_mode(s["kind"] == "inference"):
        t = torch.empty(0, dtype=g["dtype"]).set_(x.untyped_storage(), g["offset"], g["shape"], g["stride"])
    if "conj" in g["bits"]:
        t = t.conj().detach()  # detached: no _base, which would keep the storage alive after a rebind
    if "neg" in g["bits"]:
        t = torch._neg_view(t).detach()
    if not t.is_inference():  # its version counter where s's sources start (inference tensors have none)
        torch._C._autograd._unsafe_set_version_counter((t,), (g["version"],))
    return dress(t, s["kind"])


def again(t, s):
    """A new object for t: its storage, layout, bits and version counter, dressed as s's kind."""
    return dress(t.detach(), s["kind"])


def make(slot, n, s, **change):
    """Request n's source of situation s (with ``change``) at the slot's fixed address, on a
    storage of its own: just what it spans ("its own"), or a buffer its variants fit in, written
    as far as they read (``reach`` items, where one pair alone needs the buffer; else all of them)."""
    g = {{**s, **change}}
    count = g["own"] if g["storage"] == "its own" else g.get("reach", g["fill"])
    memory = memory_at(slot, g, count * g["dtype"].itemsize if g["storage"] == "its own" else g["room"])
    # Nothing reads below the offset: written from the last full period of the values there
    # (every item as a whole fill writes it), a source deep into a large buffer costs what it spans;
    # and one period made, then copied on, a long one costs a copy.
    start = g["offset"] - g["offset"] % PERIOD
    period = min(PERIOD, count - start)
    whole, rest = divmod(count - start, period)
    with torch.inference_mode(g["kind"] == "inference"), torch.no_grad():
        flat = torch.empty(0, dtype=g["dtype"]).set_(memory.untyped_storage(), start, (count - start,), (1,))
        one = values(n, g, start + period, start)
        # through its own alias: the source starts at version 0
        flat[:whole * period].view(whole, period).copy_(one.expand(whole, period))
        flat[whole * period:].copy_(one[:rest])
    return on(memory, g)


def elsewhere(t):
    """New memory for t, of its geometry: what it spans (a broadcast dimension stays one)."""
    return torch.empty_strided(t.shape, t.stride(), dtype=t.dtype)


def rebind(t, new):
    """``t.data = new``: t lives on, on other memory, with no version bump."""
    with torch.inference_mode(t.is_inference()):  # where an inference tensor may be changed at all
        t.data = new


def reread(t, dtype):
    """``t.data = t.view(dtype)``: t's items read as another dtype of their size, in place, with no
    version bump (the view made as t is: in inference mode only if t is an inference tensor)."""
    with torch.inference_mode(t.is_inference()):
        t.data = t.detach().view(dtype)


PERIOD = {period}  # values repeats itself after this many items


def values(n, s, count, start=0):
    """Request n's ``count`` values, of s's kind of values, from item ``start`` on (a multiple of PERIOD)."""
    x = content(n, s["dtype"], (count - start,), start)
    if s["values"] == "counting":
        return x
    if few_bits(s["dtype"]) and s["values"] == "fractions":  # exact fractions, not rounded ones ("large": no row)
        table = representable(s["dtype"], 2.0 ** -40, 1.0)
        return table[counting(n, (count - start,), start) % len(table)].to(s["dtype"])
    wide = x.to(torch.complex128 if x.is_complex() else torch.float64)  # float8 has no arithmetic on CPU
    if s["values"] == "nan and inf":
        wide[::7], wide[3::11] = math.nan, math.inf
    elif s["values"] == "large":  # token ids, or magnitudes far from 1
        wide = wide + 1000 if not (s["dtype"].is_floating_point or s["dtype"].is_complex) else wide * 100 + 1000
    else:
        wide = -wide if s["values"] == "negative" else wide / 256
    return wide.to(s["dtype"])


def torch_state(state):
    """The row's process-wide torch settings: the defaults, then the one ``state`` names."""
    torch.set_default_dtype({{"default dtype float64": torch.float64,
                             "default dtype bfloat16": torch.bfloat16}}.get(state, torch.float32))
    torch.use_deterministic_algorithms(state == "deterministic algorithms")
    # one thread is faster for small tensors; a pipeline runs with several
    torch.set_num_threads({threads} if state == "intra-op threads" else 1)


def span(t):
    return 1 + sum((size - 1) * stride for size, stride in zip(t.shape, t.stride())) if t.numel() else 0


def rewrite(t, n, writes=1):
    """Request n's content into what t spans, in place through a view of t: a version bump; with
    ``writes``, the version counter moved on as by that many writes (the last one's content), at the
    cost of one."""
    with torch.no_grad():
        t.as_strided((span(t),), (1,), t.storage_offset()).copy_(content(n, t.dtype, (span(t),)))
    if writes > 1:
        torch._C._autograd._unsafe_set_version_counter((t,), (t._version + writes - 1,))


def rewrite_behind(t, n):
    """Request n's content into what t spans, through another tensor on its storage,
    which has a version counter of its own: t's does not move."""
    with torch.inference_mode(t.is_inference()), torch.no_grad():
        alias = torch.empty(0, dtype=t.dtype).set_(t.untyped_storage(), t.storage_offset(), (span(t),), (1,))
        alias.copy_(content(n, t.dtype, (span(t),)))


def hits(t, where):
    """Is t in the cache? (a hit must still be t's value; a miss puts nothing)"""
    return check(t, where, put=False)


def look(t, where, expected=None):
    """Look up as a model does (see check); with a contract, the bound holds after it."""
    check(t, where, expected=expected)
    if bounded:
        held = len(cache)
        hygiene((held <= max_size, f"{{held}} entries held, max_size {{max_size}}"), where=where + ": the bound")


def fill(count, where):
    """``count`` other entries, kept alive, each looked up and inserted, with values made
    beforehand (the history of a large cache is most of a row's calls)."""
    with torch.inference_mode(False), torch.autocast("cpu", enabled=False):  # as made outside any step
        while len(pool) < len(fillers) + count:
            f = content(len(pool), torch.{pool_dtype})
            pool.append((f, project(f)))
    for f, value in pool[len(fillers):len(fillers) + count]:
        fillers.append(f)
        look(f, where, expected=value)
'''


@dataclass
class ProbeReport:
    """What the systematic phase did: rows run (of how many), trials that proved nothing,
    the time it took, and the first failure; for rows drawn at random, the seed they were drawn with."""

    rows: int
    total: int
    inconclusive: int
    seconds: float
    failure: SearchFailure | None = None
    drawn: int | None = None

    def summary(self) -> str:
        if self.drawn is not None:
            ran = f"{self.rows} rows drawn with --seed {self.drawn}"
        else:
            ran = f"{self.rows} of {self.total} rows" if self.rows < self.total else f"all {self.total} rows"
        unproven = f", {self.inconclusive} trials inconclusive (the address was not reused)" \
            if self.inconclusive else ""
        return f"{ran} in {self.seconds:.1f} s{unproven}"


def probe(spec: str, factory, level: Level, contract: str = "none", allowed: tuple = DTYPES,
          timeout: float | None = DEFAULT_TIMEOUT, only=None, drawn: tuple[int, float] | None = None) -> ProbeReport:
    """Run the rows of :func:`situations` against ``factory``: the obligations of
    ``level`` and below, and the hygiene checks ``contract`` asks for, on sources of
    the ``allowed`` dtypes only (and rows ``only(row)`` keeps, if given); stop at the
    first failure. With ``drawn`` (seed, seconds): rows of :func:`drawn_rows` instead, for
    that long."""
    started = time.monotonic()
    header, name, namespace = bind_factory(spec, factory, timeout)
    pool_dtype = "float32" if "float32" in allowed else allowed[0] if allowed else "float32"
    setup = PRELUDE.format(pool_dtype=pool_dtype, period=PERIOD,
                           threads=max(2, torch.get_num_threads()), thread_timeout=thread_limit(timeout))
    run_code(setup, namespace)
    if drawn is None:
        rows = [(number, row) for number, row in enumerate(map(_in_allowed(allowed), situations()))
                if row is not None and (only is None or only(row))]
        report = ProbeReport(0, len(rows), 0, 0.0)
    else:
        rows = enumerate(drawn_rows(drawn[0], allowed))
        report = ProbeReport(0, 0, 0, 0.0, drawn=drawn[0])
    # process-wide settings the rows change (torch_state), restored after them
    threads, state = torch.get_num_threads(), (torch.get_default_dtype(), torch.are_deterministic_algorithms_enabled())
    try:
        with alarm_handler():  # installed once for the rows' calls, each of which has its timeout
            for number, row in rows:
                if drawn is not None and time.monotonic() - started >= drawn[1]:
                    break
                report.rows += 1
                report.failure = _run_row(number, row, namespace, header + setup, name, level, contract, allowed,
                                          drawn=report.drawn)
                if report.failure:
                    break
    finally:
        torch.set_num_threads(threads)
        torch.set_default_dtype(state[0])
        torch.use_deterministic_algorithms(state[1])
    report.inconclusive = len(namespace["inconclusive"])
    report.seconds = time.monotonic() - started
    return report


def drawn_rows(seed: int, allowed: tuple = DTYPES):
    """Rows whose every value is drawn at random (seeded), after the pairwise array: it meets each
    pair of values, and these meet triples, each in about one row in the product of its three
    properties' sizes (a dtype, a kind and a layout: one in 1,134)."""
    rng = random.Random(seed)
    fitted = _in_allowed(allowed)
    while True:
        row = {}
        for name in rng.sample(list(PROPERTIES), len(PROPERTIES)):
            row[name] = rng.choice([v for v in PROPERTIES[name] if _possible({**row, name: v})])
        if (row := fitted(row)) is not None:
            yield row


def _in_allowed(allowed: tuple):
    """A row as a cache that takes only the ``allowed`` dtypes sees it: another dtype in
    the row's place where it has one of the others (the first that fits the rest of
    the row), so that every other pair still meets; None where none fits."""
    def fitted(row: dict) -> dict | None:
        if row["dtype"] in allowed:
            return row
        return next((dict(row, dtype=d) for d in allowed if _possible(dict(row, dtype=d))), None)
    return fitted


def _run_row(number: int, row: dict, namespace: dict, prelude: str, name: str, level: Level,
             contract: str, allowed: tuple, drawn: int | None = None) -> SearchFailure | None:
    """One row, step by step; its first failure as a runnable snippet (its steps so far).
    ``drawn``: the seed the row was drawn with, if it is one of :func:`drawn_rows`."""
    steps = row_steps(row, name, level, contract, allowed)
    for done, (_, code) in enumerate(steps):
        try:
            run_code(code, namespace)
        except AssertionError as exc:  # raised by look() and its kin: a finding about the cache
            ran = steps[:done + 1]
            body = "\n".join(text for _, text in ran)
            label = f"probe row {number}" if drawn is None else f"row {number} drawn with --seed {drawn}"
            snippet = f"{prelude}\n\n# {label}: {describe(row)}\n{body}\n"
            # The level of the obligation that failed: each makes its sources at an address of
            # its own, so what an earlier one did is only history to it (and a false hit at
            # L0 after a freed address went elsewhere is still an L0 false hit).
            return SearchFailure(ran[-1][0], str(exc), snippet, seed=drawn, row=number)
    return None


def find_failure(spec: str, factory, level: Level, budget: float, seed: int = 0,
                 timeout: float | None = DEFAULT_TIMEOUT, unsupported: frozenset = frozenset(),
                 contract: str = "none", out=None) -> SearchFailure | None:
    """The audit's phases after the catalogue, at ``level``: every probe row, then rows drawn
    at random and the random search, each for half of what is left of ``budget`` seconds; the
    first failure, or None. The probes always run to the end, however long a busy machine makes
    them take, so what they cover, and the verdict they give, do not depend on speed; the budget
    bounds the drawn rows and the search only. ``out`` hears a line after each phase."""
    deadline = time.monotonic() + budget
    allowed = allowed_dtypes(unsupported)
    report = probe(spec, factory, level, contract, allowed, timeout)
    if out:
        out(f"probes: {report.summary()}" + ("" if report.failure else ", no failure"))
    if report.failure:
        return report.failure
    if time.monotonic() >= deadline:
        if out:
            out("drawn rows, search: not run (no --budget left after the probes)")
        return None
    # Half of what is left for rows drawn at random (triples of values), half for the search.
    report = probe(spec, factory, level, contract, allowed, timeout, drawn=(seed, (deadline - time.monotonic()) / 2))
    if out:
        out(f"drawn rows: {report.summary()}" + ("" if report.failure else ", no failure"))
    if report.failure:
        return report.failure
    started = time.monotonic()
    if started >= deadline:
        if out:
            out("search: not run (no --budget left after the drawn rows)")
        return None
    tally: dict = {}
    failure = search(spec, factory, level, deadline - started, seed, timeout=timeout, unsupported=unsupported,
                     contract=contract, tally=tally)
    if out and failure is None:  # how much ran: the budget, on this machine, decides
        rounds = tally.get("rounds", 0)
        out(f"search: no failure in {time.monotonic() - started:.1f} s ({rounds} rounds of up to {EXAMPLES} "
            f"sequences, round seeds {seed}-{seed + max(rounds, 1) - 1})")
    return failure


def describe(row: dict) -> str:
    return ", ".join(f"{name} {row[name]}" for name in PROPERTIES)


def source_of(row: dict) -> dict:
    """The situation as the snippet's ``S``: dtype, shape, stride, offset, origin, kind,
    bits and values; ``fill``, the elements its sources and every key variant of them
    reach; ``room``, the bytes that takes in the widest dtype."""
    shape, stride = SHAPES[row["shape"]], _strides(SHAPES[row["shape"]], row["layout"])
    if row["size"] != SIZES[0] and len(shape) == 1:
        shape, stride = ((2**24 + 1,), (0,))
    elif row["size"] != SIZES[0]:
        shape, stride = ((2**24 // math.prod(shape) + 1) | 1, *shape), (0, *stride)
    s = {"dtype": getattr(torch, row["dtype"]), "shape": shape, "stride": stride,
         "offset": eval(row["offset"]), "origin": row["origin"], "kind": row["kind"], "bits": row["bits"],  # noqa: S307
         "values": row["values"], "storage": row["storage"], "version": eval(row["version"])}  # noqa: S307
    # in the source's items: a variant of another dtype reads its bytes
    reach = [-(-_bytes({**s, **change}) // s["dtype"].itemsize) for _, change, _ in key_variants(s)]
    s["own"] = _end(s)
    s["fill"] = max([s["own"], *reach])
    s["room"] = s["fill"] * 16
    return s


def _end(g: dict) -> int:
    """One past the last element a tensor of geometry ``g`` reads (its offset and strides)."""
    return g["offset"] + 1 + sum((size - 1) * abs(st) for size, st in zip(g["shape"], g["stride"]))


def _strides(shape: tuple, layout: str) -> tuple:
    contiguous = torch.empty(shape, device="meta").stride()
    if layout == "transposed":
        return torch.empty(shape, device="meta").transpose(-1, -2).contiguous().transpose(-1, -2).stride()
    if layout == "every other":
        return tuple(2 * st for st in contiguous)
    if layout == "expanded":
        return (0,) + contiguous[1:]
    if layout.startswith("channels_last"):
        return torch.empty(shape, device="meta", memory_format=getattr(torch, layout)).stride()
    return contiguous


def key_variants(s: dict, allowed: tuple = DTYPES) -> list[tuple[str, dict, dict]]:
    """Other tensors on the source's storage that differ from it in one key field
    alone, keeping every property of the row they can: (field, what the other tensor
    changes, what both change from the row); of the ``allowed`` dtypes only. Where the
    pair does not fit in a storage that is just the source's, both use a larger buffer."""
    out = []
    for field, change, both in _key_variants(s):
        if any(str(d.get("dtype", s["dtype"])).removeprefix("torch.") not in allowed for d in (change, both)):
            continue
        a = {**s, **both}
        if s.get("storage") == "its own" and not (a["dtype"] is s["dtype"] and _bytes({**a, **change}) <= _bytes(s)):
            # what the pair reads, in the items of the source made for it: only that is written (a
            # vector past 2**24 elements has one variant, its stride, that reads them all; the rest, a few)
            reach = max(-(-_bytes(g) // a["dtype"].itemsize) for g in (a, {**a, **change}))
            both = {**both, "storage": "a larger buffer", "reach": reach}
        out.append((field, change, both))
    return out


def _bytes(g: dict) -> int:
    return _end(g) * g["dtype"].itemsize


def _key_variants(s: dict) -> list[tuple[str, dict, dict]]:
    shape, stride, dtype = s["shape"], s["stride"], s["dtype"]
    out = [("address", {"offset": s["offset"] + 2}, {})]  # two items on: the parity of the offset stays
    if shape:
        # the first dimension longer than 1, two longer (shorter, from 3, but for a source past
        # 2**24 elements, which stays past it): contiguity, the parity of the size, a dimension of
        # size 1 and the memory format all stay
        d = next((i for i, size in enumerate(shape) if size != 1), 0)
        step = 2 if shape[d] < 3 or math.prod(shape) > 2**24 else -2
        out.append(("shape", {"shape": tuple(size + step * (i == d) for i, size in enumerate(shape))}, {}))
        # the stride of a dimension longer than 1, doubled (or 1 for a zero stride, in the shortest
        # such dimension: what it reads stays small): the stride of a size-1 dimension would change
        # no value, so confusing the two would be harmless
        longer = [i for i, size in enumerate(shape) if size > 1]
        d = next((i for i in longer if stride[i]), min(longer, key=lambda i: shape[i], default=0))
        out.append(("stride", {"stride": tuple(2 * st or 1 if i == d else st for i, st in enumerate(stride))}, {}))
    for other in map(lambda name: getattr(torch, name), _dtype_variants(dtype, s["bits"], s["kind"] in GRAD_KINDS)):
        # at the same byte address: the offset counted in the other dtype's items
        if s["offset"] * dtype.itemsize % other.itemsize == 0:
            out.append(("dtype", {"dtype": other, "offset": s["offset"] * dtype.itemsize // other.itemsize}, {}))
    # The conj bit exists for complex dtypes only: a row of another dtype checks it on
    # complex64 sources, so that the bit meets every other property of the row too.
    # Likewise the neg bit, on int8 (one byte, as bool and float8) where torch cannot negate,
    # and both on complex64 where complex32 cannot carry the two at once.
    for field, bit in (("conj bit", "conj"), ("neg bit", "neg")):
        bits = _toggled(s["bits"], bit)
        same = (dtype.is_complex or bit == "neg") and readable(name_of(dtype), bits)
        out.append((field, {"bits": bits},
                    {} if same else {"dtype": torch.complex64 if dtype.is_complex or bit == "conj" else torch.int8}))
    return out


def _toggled(bits: str, bit: str) -> str:
    """``bits`` ("none", "conj", "neg" or "conj neg") with ``bit`` set or cleared, the other kept."""
    kept = set(bits.split()) - {"none"}
    return " ".join(sorted(kept ^ {bit})) or "none"


def _dtype_variants(dtype: torch.dtype, bits: str, grad: bool) -> list[str]:
    """Other dtypes to read the same bytes as: every one of the same item size (a key that
    confuses any two of them meets its pair), and one of the same kind of another size; of
    those that can carry the source's bits and require grad where it does."""
    def fits(d):
        return ("conj" not in bits or d.is_complex) and readable(name_of(d), bits) and (not grad or gradable(d))
    picks = [d for d in alike(dtype) if fits(d)]
    other_size = next((d for d in map(lambda n: getattr(torch, n), DTYPES) if fits(d) and d is not dtype
                       and d.itemsize != dtype.itemsize and d.is_complex == dtype.is_complex
                       and d.is_floating_point == dtype.is_floating_point), None)
    return [name_of(d) for d in picks + ([other_size] if other_size is not None else [])]


def row_steps(row: dict, factory_name: str, level: Level, contract: str,
              allowed: tuple = DTYPES, going_on: bool = False) -> list[tuple[Level, str]]:
    """The row's steps as (level, code): the cache and its history, then each obligation
    of ``level`` and below, in the row's grad mode and thread. The long-lived row goes on with
    the situations of ``LIVED_ON`` in its cache, and the filled large row with those of ``FILLED_ON``
    (``going_on``: one of those, in the cache as it is)."""
    s = source_of(row)
    max_size = int(row["max_size"])
    held = HISTORIES[row["history"]]
    held = max_size if held is None else min(held, max_size)
    literal = ", ".join(f"{k}={_literal(v)}" for k, v in s.items())
    cache = [f"# then, in the same cache: {describe(row)}"] if going_on else [
        f"max_size = {max_size}",
        "skew[0] = 0  # each row's cache starts on the real clock",
        f"cache = caches[0] = Clocked({factory_name}(max_size=max_size))"]
    # A cache past FILLED entries stays full for the situations after its row: its entries kept
    # alive, topped up to its bound where the situation before's died, no clear() and no recency
    # (which fills it twice: judged in the row), so that each of their puts meets a full cache.
    kept_full = going_on and max_size > FILLED
    setup = cache + [f"bounded = {contract != 'none'}",
                     "kept.clear()" if kept_full else "fillers.clear(); kept.clear()",
                     f"torch_state({row['torch state']!r})",
                     f"S = dict({literal})"]
    if held and not going_on:
        setup.append(f"fill({held}, 'the history')")
    if kept_full:  # a cache that empties itself (at a request's end) has no full cache to keep
        setup.append("if len(cache):\n    fill(max_size - len(cache), 'kept full')")
    if row["history"] in INSERTS and not going_on:
        setup.append(f"fill({INSERTS[row['history']]}, 'the history')\nfor _ in range(110):\n"
                     "    look(fillers[-1], 'the history')")
    if row["history"] == "cleared":
        setup.append("cache.clear()")
    steps = [(Level.L0, "\n".join(setup))]
    hits = int(row["hits"])

    def looked(x: str, situation: str = "S") -> str:
        return x if row["lookup"] == "the source" else f"again({x}, {situation})"

    def before(x: str, what: str, situation: str = "S") -> str:
        # its content does not change meanwhile: its value computed once, each hit compared with it
        call = f"look({looked(x, situation)}, '{what}: before the change', expected=now)"
        lookups = f"now = project({x})\n" + (call if hits == 1 else f"for _ in range({hits}):\n    {call}")
        return lookups + (f"\nfill({row['age']}, '{what}: the entry ages')" if row["age"] != "0" else "") + (
            f"\nadvance({ELAPSED[row['elapsed']]})" if row["elapsed"] != "0" else "")

    # An inference tensor has no version counter to bump, and a view's base holds its
    # storage, so its address never goes to another request: the obligations that need
    # those run on a plain tensor (T) with the rest of the row.
    versioned = "S" if row["kind"] != "inference" else "T"
    movable = "S" if row["kind"] not in VIEW_KINDS else "T"
    if "T" in (versioned, movable):
        steps[0] = (Level.L0, steps[0][1] + "\nT = dict(S, kind='tensor')")
    # Each obligation makes its sources at a slot of its own and keeps them to the row's
    # end: only the freed and swapped ones hand an address on, to their own next request.
    # Before the write, a hit through another tensor object on its storage (a view a step takes).
    obligations = [(Level.L0, f"a = make(SLOT, 1, {versioned})\n{before('a', 'in place', versioned)}\n"
                              f"look(again(a, {versioned}), 'in place: through another object, before the write', "
                              "expected=now)\n"
                              f"rewrite(a, 2, writes={row['writes']})\n"
                              f"look({looked('a', versioned)}, 'in place: after {row['writes']} write(s)')\n"
                              "kept.append(a)")]
    def in_place(content: int, what: str, change: str, after: str, made: str = "S") -> tuple:
        """An L0 obligation: a source put, changed in place by ``change`` (the same object), looked up again."""
        return (Level.L0, f"a = make(SLOT, {content}, {made})\n{before('a', what)}\n{change}\n"
                          f"look({looked('a')}, '{after}')\nkept.append(a)")

    obligations.append(in_place(31, "reshaped in place", "relayout(a, lambda t: t.unsqueeze_(0))",
                                "reshaped in place: after unsqueeze_(0)"))
    # A lazy bit turned over on the source itself (``t.data = t.conj()``): the same object, storage,
    # address, layout and version, its content read otherwise; only the bit in the key tells.
    flip = _turnable_bit(row["dtype"], row["bits"])
    if flip:
        turned = "a.detach().conj()" if flip == "conj" else "torch._neg_view(a.detach())"
        obligations.append(in_place(35, f"{flip} bit turned over", f"rebind(a, {turned})",
                                    f"{flip} bit turned over: after a.data = {turned}"))
    # The dtype alone, in place (``t.data = t.view(other)``: its items read as another dtype of their
    # size): the same object, storage, address, shape, stride and version; only the dtype tells.
    sibling = _reinterpreted(row, allowed)
    if sibling:
        obligations.append(in_place(36, "dtype turned over", f"reread(a, torch.{sibling})",
                                    f"dtype turned over: after a.data = a.view(torch.{sibling})"))
    # A flag turned over on the source, then a write (a model frozen or unfrozen after loading, its
    # weights then updated in place): requires_grad_ keeps the object, its storage and layout.
    if gradable(getattr(torch, row["dtype"])) and row["kind"] not in VIEW_KINDS + ("inference",):
        obligations.append(in_place(37, "requires_grad turned over",
                                    f"a.requires_grad_(not a.requires_grad)\nrewrite(a, 38, writes={row['writes']})",
                                    "requires_grad turned over, then written"))
    # The stride alone, in place, the shape kept, so a fast path that checks an inference tensor's
    # shape but not all of its stride meets its old entry (see _restrided); else the key's stride
    # variant (room made for it).
    variants = key_variants(s, allowed)
    other = _restrided(s["shape"], s["stride"])
    restride = ({"stride": other}, {}) if other else next(
        ((change, both) for field, change, both in variants if field == "stride"), None)
    if restride:
        change, both = restride
        obligations.append(in_place(32, "restrided in place", "relayout(a, lambda t: t.as_strided_(t.shape, "
                                    f"{change['stride']}, t.storage_offset()))",
                                    f"restrided in place: after as_strided_ to stride {change['stride']}",
                                    made=f"S, {_arguments(both)}" if both else "S"))
    if level >= Level.L1:
        obligations.append((Level.L1, f"a = make(SLOT, 21, S)\n{before('a', 'freed')}\nptr = a.data_ptr()\n"
                                      "del a\nb = make(SLOT, 22, S)\n" + _if_reused("b", looked("b"), "freed")
                                      + "\nkept.append(b)"))
    if level >= Level.L2:
        # A write through the source, looked up through another tensor object on its storage made
        # before the write (``on``: a version counter of its own, still where the source's was when
        # put): its key is the entry's, so only a recheck of the entry's referent sees the write.
        v, seen = versioned, "written, seen through an older object"
        obligations.append((Level.L2, f"a = make(SLOT, 33, {v})\nlook(a, '{seen}: the source')\n"
                                      f"{before('a', seen, v)}\nolder = on(a, {v})\n"
                                      f"rewrite(a, 34, writes={row['writes']})\n"
                                      f"look(older, '{seen}: another tensor on its storage, made before the write')\n"
                                      "kept.extend((a, older))"))
        # put through the source itself: what these check is a live referent whose storage changed
        m = movable
        obligations.append((Level.L2, f"a = make(SLOT, 23, {m})\nlook(a, 'storage swapped: the source')\n"
                                      f"{before('a', 'storage swapped', m)}\n"
                                      f"ptr = a.data_ptr()\nrebind(a, elsewhere(a))\nb = make(SLOT, 24, {m})\n"
                                      + _if_reused("b", looked("b", m), "storage swapped") + "\nkept.extend((a, b))"))
        obligations.append((Level.L2, f"a = make(SLOT, 25, {m})\nlook(a, 'rebound: the source')\n"
                                      f"{before('a', 'rebound', m)}\nptr = a.data_ptr()\n"
                                      f"rebind(a, elsewhere(a))\nrebind(a, make(SLOT, 26, {m}))\n"
                                      + _if_reused("a", looked("a", m), "rebound away and back") + "\nkept.append(a)"))
    if level >= Level.L3:
        obligations.append((Level.L3, f"a = make(SLOT, 27, S)\n{before('a', 'rewritten behind')}\nend()\n"
                                      f"begin()\nrewrite_behind(a, 28)\n"
                                      f"look({looked('a')}, 'rewritten with no version bump, the next request')\n"
                                      "kept.append(a)"))
    # the key fields last: they bring other dtypes and layouts into the cache
    for n, (field, change, both) in enumerate(variants, start=3):
        change = _arguments(change)
        both = f", {_arguments(both)}" if both else ""
        obligations.append((Level.L0, f"a = make(SLOT, {n}, S{both})\nlook({looked('a')}, 'key: {field}: the source')\n"
                                      f"b = on(a, S, {change}{both})\n"
                                      f"look(b, 'key: {field}: another tensor on its storage that differs in "
                                      f"{field} alone')\nkept.extend((a, b))"))
    if contract != "none" and not kept_full:  # on the history the row and its obligations made
        obligations.append((Level.L0, "cache.clear()\nhygiene((len(cache) == 0, 'entries held after clear()'), "
                                      "(all(cache.get(f) is None for f in fillers[-3:]), 'a hit after clear()'), "
                                      "where='clear()')"))
    if contract == "lru" and not kept_full:  # in the cache just cleared, filled to its bound again
        # A cache of one entry has no recency, and one above FILLED is not filled (but FILLED_LARGE's): there, recency is
        # judged in a new cache of 3 (the rest of the row as it is), so that it meets every value.
        size = max_size if 2 <= max_size <= FILLED or max_size == FILLED_LARGE_SIZE else 3
        side = "" if size == max_size else (f"global cache, max_size\nmax_size = {size}  # recency in a cache of "
                                            f"{size} (see MAX_SIZES)\n"
                                            f"cache = caches[0] = Clocked({factory_name}(max_size=max_size))\n")
        # Put through the source itself, hit once the row's way: a cache keyed by the object
        # never hits through a new one, and then there is no recency to judge.
        through_new = row["lookup"] != "the source"
        aged = ELAPSED[row["elapsed"]]  # the hit comes that long after the put: an old entry's hit refreshes it too
        obligations.append((Level.L0, _recency(side, 20, "recency", through_new, looked("a"),
                                               (size - 1, "the source", f"after {size - 1} others"),
                                               (1, "after one more", "the recently used entry was evicted"), aged)))
        if size >= 3:  # a hit before the cache is full must refresh too (the check above hits a full one)
            obligations.append((Level.L0, _recency(
                "cache.clear()\n", 29, "recency, not full", through_new, looked("a"),
                (size - 2, "the source", "a hit in a cache not yet full"),
                (2, "after the cache filled", "the entry used before the cache was full was evicted"), aged)))
    if contract == "lru" and not kept_full and 2 <= max_size <= 128:
        # The entry used least recently goes first, however often it was hit before: the source hit
        # (the row's number of hits), then every other entry put and hit once, then one more put.
        # (LRU evicts the source; so does a second chance, as all were hit since they came round.)
        where, others = "least recently used", max_size - 1
        obligations.append((Level.L0, f"cache.clear()\na = make(SLOT, 39, S)\nlook(a, '{where}: the source')\n"
                                      f"kept.append(a)\nfor _ in range({hits}):\n    hits({looked('a')}, '{where}: a hit')\n"
                                      f"fill({others}, '{where}')\nfor f in fillers[-{others}:]:\n"
                                      f"    hits(f, '{where}: each other entry hit once')\nfill(1, '{where}: one more')\n"
                                      f"kept_it = hits(a, '{where}: the source, after one more')\n"
                                      f"hygiene((not kept_it, 'the entry used least recently was kept (hit {hits} time(s) "
                                      f"before {others} others were each put and hit once): one used since was evicted'), "
                                      f"where='{where}')"))
    mode = GRAD_MODES[row["grad"]]
    for slot, (step_level, body) in enumerate(obligations):
        body = body.replace("SLOT", str(slot))
        if level >= Level.L3:
            body = f"begin()\n{body}\nend()"
        if mode:
            body = f"with {mode}:\n{_indent(body)}"
        if row["torch state"] == "autocast":  # per thread, as grad modes are: set in the step
            body = f"with torch.autocast('cpu', dtype=torch.bfloat16):\n{_indent(body)}"
        steps.append((step_level, f"def step():\n{_indent(body)}\n\n\n"
                                  + ("in_thread(step)" if row["thread"] == "other" else "step()")))
    if not going_on:
        for other in filter(None, map(_in_allowed(allowed), lived_on(row, level))):
            steps += row_steps(other, factory_name, level, contract, allowed, going_on=True)
    return steps


def _restrided(shape: tuple, stride: tuple) -> tuple | None:
    """Another stride for a source of ``shape`` over the same memory, no more room needed: the
    strides of two dimensions of one size swapped (a transpose that keeps the shape, the same
    strides permuted), where it has them; else its elements in another order, if dense; else None."""
    for i, j in itertools.combinations(range(len(shape)), 2):
        if shape[i] == shape[j] > 1 and stride[i] != stride[j]:
            swapped = list(stride)
            swapped[i], swapped[j] = stride[j], stride[i]
            return tuple(swapped)
    return other_order(shape, stride)


def _turnable_bit(dtype: str, bits: str) -> str | None:
    """The lazy bit a source of ``dtype`` with ``bits`` set can have turned over and still be read:
    conj for a complex dtype, else neg; None where torch can read neither turned."""
    have = set(bits.split()) - {"none"}
    for bit in ("conj", "neg"):
        if (bit == "neg" or getattr(torch, dtype).is_complex) and readable(dtype, " ".join(sorted(have ^ {bit})) or "none"):
            return bit
    return None


def _reinterpreted(row: dict, allowed: tuple) -> str | None:
    """A dtype of the same item size to read the row's source as, in place, the most alike (one
    that can require grad where the source does); None where it has a lazy bit (torch reads such a
    tensor as no other dtype) or no such dtype is allowed."""
    if row["bits"] != "none":
        return None
    others = alike(getattr(torch, row["dtype"]), allowed)
    if row["kind"] in GRAD_KINDS:
        others = [d for d in others if gradable(d)]
    return name_of(others[0]) if others else None


def _if_reused(name: str, lookup: str, what: str) -> str:
    """Look up only where the allocator really reused the address; else the trial is inconclusive."""
    # Bare numbers (int): the allocator handing the address back is what is tested here.
    return (f"if int({name}.data_ptr()) == int(ptr):\n    look({lookup}, '{what}: the next request at its address')\n"
            f"else:\n    inconclusive.append('{what}')")


def _arguments(change: dict) -> str:
    return ", ".join(f"{k}={_literal(v)}" for k, v in change.items())


def _recency(prefix: str, content: int, where: str, through_new: bool, looked: str,
             before: tuple[int, str, str], after: tuple[int, str, str], aged: int = 0) -> str:
    """A recency check: source ``a`` put, ``before[0]`` others filled, ``aged`` seconds on the cache's
    clock, a hit on ``a``, ``after[0]`` more filled, and ``a`` must still hit (an LRU cache evicted
    another). The labels say where each look is. An entry that old may have expired (a miss is
    safe): then there is no hit to judge."""
    (fill_before, source_label, hit_label), (fill_after, kept_label, evicted) = before, after
    return (f"{prefix}a = make(SLOT, {content}, S)\nlook(a, '{where}: {source_label}')\nkept.append(a)\n"
            f"fill({fill_before}, '{where}')\n" + (f"advance({aged})\n" if aged else "")
            + f"fresh = hits({looked}, 'recency: {hit_label}')\n"
            f"if fresh or not {through_new or bool(aged)}:\n"
            f"    fill({fill_after}, '{where}')\n"
            f"    kept_it = hits({looked}, 'recency: {kept_label}')\n"
            f"    hygiene((fresh, 'a fresh entry missed'), (kept_it, '{evicted}'), where='{where}')")


def _literal(value) -> str:
    return f"torch.{str(value).removeprefix('torch.')}" if isinstance(value, torch.dtype) else repr(value)


def _indent(code: str) -> str:
    return "\n".join("    " + line for line in code.splitlines())


def coverage_markdown() -> str:
    """What the rows vary, from ``PROPERTIES`` and ``SHAPES`` themselves, as docs/audit.md shows it."""
    def shown(name, value):
        return f"`{value}` {SHAPES[value]}" if name == "shape" else f"`{value}`"
    lines = [f"- **{name}**: {', '.join(shown(name, v) for v in values)}" for name, values in PROPERTIES.items()]
    largest = ", ".join(f"{name} `{value}`" for name, value in LARGEST.items())
    pairwise = len(situations()) - len(EXTREMES) - len(triples()) - len(formats()) - len(LAST_ROWS)
    return "\n".join(lines) + (f"\n\n{pairwise} rows meet every possible pair of "
                               f"these values; {len(EXTREMES)} more, one per dtype, hold the everyday case with "
                               f"{largest}, all at once; {len(triples())} more, in a new cache of max_size "
                               f"`{SMALL_NEW['max_size']}`, meet every value of every property with every pair of "
                               f"a dtype and a rank ({', '.join(RANKS)}; the source's, which a broadcast dimension in front raises by one); {len(formats())} more, in such a cache, meet every value of "
                               f"every property with each of the memory formats that exist at one rank alone "
                               f"({', '.join(f'`{layout}`' for layout in ONE_RANK_LAYOUTS)}) and each shape it exists in; one the everyday case with each source looked up "
                               f"{HIT_OFTEN['hits']} times before it changes; and two last ones the everyday case in a cache of max_size "
                               f"`{FILLED_LARGE_SIZE}`, filled to its bound (and again for its recency), and in a "
                               f"cache of max_size `{LONG_LIVED['max_size']}` after `{LONGEST}` (then 110 "
                               f"lookups). Each of the two goes on in its cache with situations that hold every "
                               f"value of every other property between them at each of the cache's ages "
                               f"({', '.join(f'`{e}`' for e in PROPERTIES['elapsed'])}, in turn): {len(FILLED_ON)} in the large cache, "
                               f"kept full (its bound checked at each look; recency judged in the row alone), and "
                               f"{len(LIVED_ON)} in the long-lived one.\n")


__all__ = ["PROPERTIES", "ProbeReport", "coverage_markdown", "find_failure", "probe", "situations"]
