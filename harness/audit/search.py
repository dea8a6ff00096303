"""The audit's generative phase: a differential stateful search on the cache under audit.

The catalogue holds each situation still (one size, one dtype, one layout). This
search varies them: hypothesis drives random sequences of steps against the
cache, and an oracle checks every hit (a hit must be the value computed from the
looked-up tensor's *current* content). Sources and histories are composed from
the properties below (ranks, sizes, dtypes, memory formats, storage origins,
tensor kinds, views, grad modes, fills, caches, threads, max_size, and every way
a live source changes); :func:`coverage` renders that list from these very
constants, and docs/audit.md shows it.

Every step *is* a line of plain Python: the machine executes the text it records,
so a failure shrinks to a short runnable snippet that reproduces it with plain
torch calls. A false hit belongs to the highest level among its steps; an
exception on a plain tensor, to L0.
"""

from __future__ import annotations

import contextlib
import functools
import math
import time
from dataclasses import dataclass

import hypothesis
from hypothesis import HealthCheck, Phase, settings, strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, precondition, rule, run_state_machine_as_test

import torch
import torch.utils.dlpack
from torch.multiprocessing.reductions import StorageWeakRef

from cache_impl import Level
from cache_impl.registry import CtrlC, alarm_handler
from harness.audit.dtypes import DTYPES, LEFT_OUT, SIBLING
from repro.guard import DEFAULT_TIMEOUT, guarded

SLOTS = 2  # addresses that requests' tensors take turns at: few, so reuse is common
SIZES = (2, 1, 4096, 3, 128, 8, 64, 17, 1024, 5, 256)  # max_size, one per round of examples, in turn
# Source shapes: these, or any of rank 0 to 6 with each size drawn from DIM_SIZES.
# "large" is a text embedding's size (a batch of 2 x 77 x 768).
SHAPES = {"4x8": (4, 8), "scalar": (), "one": (1,), "empty": (0, 8), "odd": (3, 5, 7), "4d": (2, 2, 2, 4),
          "5d": (1, 2, 2, 2, 4), "6d": (1, 2, 1, 3, 1, 2), "large": (2, 77, 768)}
DIM_SIZES = (1, 2, 3, 4, 5)
ARENA_BYTES = 2 * 77 * 768 * 16  # the largest shape in the widest dtype
# Memory formats a source is made in, at its slot's address: the strides of ``format``
# for the shape's rank, or the last two dimensions swapped.
LAYOUTS = {"contiguous": 0, "channels_last": 4, "channels_last_3d": 5, "transposed": 2}  # -> the rank it needs
# Where a source's storage comes from: torch's allocator (DLPack, as a fresh tensor at
# a reused address), NumPy (from_numpy), a Python buffer (frombuffer), shared memory.
ORIGINS = ("allocator", "from_numpy", "frombuffer", "shared_memory")
# What kind of tensor object it is.
KINDS = ("tensor", "frozen_parameter", "trainable_parameter", "buffer", "user_subclass")
GRAD_MODES = {"enabled": None, "no_grad": "torch.no_grad()", "inference": "torch.inference_mode()"}
CACHES = 2  # cache instances the steps look up in (the second of max_size 3)
FILLS = (3, 40, 8, 130)  # other entries one step adds, each looked up and inserted
REPEATS = (1, 2, 20)  # lookups in a row on one entry
HOURS = (1, 3, 25, 1000)  # the clock the cache reads moves on at once: a long-running server's entries are old
WRITES = (1, 2**8, 2**16, 2**31)  # in-place writes one step makes (past the widths a version may be cut to)
LAYOUT_CHANGES = ("unsqueeze_", "transpose_", "another order")  # in place, on the same memory
REINTERPRETATIONS = ("sibling_dtype", "conj", "first_half", "second_half")  # what ``.data =`` makes of a source
EXAMPLES, STEPS = 50, 20  # sequences per round, steps per sequence
RECENCY_PROBE_MAX = 128  # LRU recency is probed in rounds of max_size 2 to this (a probe fills a cache to its bound)

# What a source is made of, each drawn: per sequence (its habit), and anew now and then.
SOURCE = {
    "dtype": st.sampled_from(DTYPES),
    "shape": st.one_of(st.sampled_from(tuple(SHAPES.values())),
                       st.lists(st.sampled_from(DIM_SIZES), max_size=6).map(tuple)),
    "layout": st.sampled_from(tuple(LAYOUTS)),
    "origin": st.sampled_from(ORIGINS),
    "kind": st.sampled_from(KINDS),
}

# Half the sequences keep to the plain case a text encoder's output is (these sources,
# torch's allocator, the main thread, the first cache), so that the everyday situations
# stay as likely as they were before the draws above widened: a defect there is found fast.
PLAIN = {"dtype": ("float32", "float16", "bfloat16", "complex64", "int64", "float64"),
         "shape": ((4, 8), (2, 2, 2, 4), (1, 2, 2, 2, 4), (2, 77, 768)),
         "layout": ("contiguous",), "origin": ("allocator",), "kind": ("tensor",)}
PLAIN_VIEWS = ("itself", "detach", "chunk0", "chunk1", "rows_1_3", "transposed", "view_8x4", "expanded_row",
               "every_other_column", "square_transposed")  # a pipeline's own views of a text embedding

# Views of a live source, as expressions over its name; most are written for a (4, 8)
# source. A lookup draws any of them: one that torch refuses for the source at hand
# (another rank, a layout it cannot view) falls back to the source itself.
VIEWS = {
    "itself": "{s}",
    "detach": "{s}.detach()",
    "flattened": "{s}.reshape(-1)",
    "unsqueezed": "{s}.unsqueeze(0)",
    "as_strided_same": "{s}.as_strided({s}.shape, {s}.stride(), {s}.storage_offset())",
    # of any source: two windows of one shape and stride at other offsets, and one of another stride
    "flat_head": "{s}.reshape(-1)[:-1]",
    "flat_tail": "{s}.reshape(-1)[1:]",
    "flat_broadcast": "{s}.reshape(-1)[:1].expand({s}.numel())",
    "chunk0": "{s}.chunk(2)[0]",  # CFG halves of one batched tensor
    "chunk1": "{s}.chunk(2)[1]",
    "rows_1_3": "{s}[1:3]",
    "narrow": "{s}.narrow(1, 2, 3)",
    "select": "{s}.select(0, 1)",
    "transposed": "{s}.t()",
    "permuted": "{s}.permute(1, 0)",
    "view_8x4": "{s}.view(8, 4)",
    "expanded_row": "{s}[0:1].expand(4, 8)",  # same address and shape as {s}, stride 0
    "every_other_column": "{s}[:, ::2]",
    "square_transposed": "{s}[:, :4].t()",  # same address and shape as every_other_column
    "unfold": "{s}.unfold(1, 4, 2)",
    "diagonal": "{s}.diagonal()",
    "as_strided_overlapping": "{s}.as_strided((4, 4), (1, 1))",
}
# What a lookup may do to the view's bits after it: read it as another dtype of the same
# item size, conjugate it, take its imaginary part (with the neg bit after a conj), or
# view a complex one as real pairs. Composed with every view above.
BITS = {
    "sibling_dtype": ".view(torch.{sibling})",
    "conj": ".conj()",
    "imag": ".imag",
    "imag_of_conj": ".conj().imag",  # the neg bit
    "view_as_real": "",  # torch.view_as_real(view), written out in the lookup
}
LOOKUP_VIEWS = ["itself"] * (len(VIEWS) - 1) + list(VIEWS)
LOOKUP_BITS = [None] * (2 * len(BITS)) + list(BITS)  # mostly the view as it is
PLAIN_LOOKUP_VIEWS = ["itself"] * (len(PLAIN_VIEWS) - 1) + list(PLAIN_VIEWS)

# What every snippet of the search and the probes defines: request contents, the
# projection a model would cache, the oracle, and the ways a step calls the cache.
HELPERS = '''import functools
import math
import threading

import numpy


class UserTensor(torch.Tensor):
    """A user's subclass, without __torch_dispatch__."""


def rewrapped(memory, origin):
    """memory's bytes on a new storage object, made as ``origin`` makes one: NumPy
    (``from_numpy``), a Python buffer (``frombuffer``), else DLPack, as torch's
    allocator hands a freed address to a new tensor."""
    if origin == "from_numpy":
        return torch.from_numpy(memory.numpy())
    if origin == "frombuffer":
        return torch.frombuffer(memory.numpy(), dtype=torch.uint8)
    return dlpack.from_dlpack(dlpack.to_dlpack(memory))


def dress(t, kind):
    """t as a pipeline may hand it over: a tensor, a leaf requiring grad, a Parameter, a
    module's buffer, a user's subclass, a view (with a grad_fn, for "grad view")."""
    if kind in ("view", "grad view"):
        with torch.inference_mode(False), torch.enable_grad():
            return (t.requires_grad_() if kind == "grad view" else t).view(t.shape)
    if kind == "requires_grad":
        return t.requires_grad_()
    if kind.endswith("parameter"):
        return torch.nn.Parameter(t, requires_grad=kind == "trainable_parameter")
    if kind == "buffer":
        holder = torch.nn.Module()  # a module's buffer; the module goes, the buffer lives on as the source
        holder.register_buffer("buffer", t)
        return holder.buffer
    # as_subclass() would make a view, whose _base keeps the memory alive after a rebind
    return torch.Tensor._make_subclass(UserTensor, t) if kind == "user_subclass" else t


def counting(n, shape, start=0):
    """Request n's integers, 0 to 250, neighbours distinct; ``start``: as the items from there on
    of a longer run."""
    return (torch.arange(start, start + math.prod(shape)).view(shape) + 37 * n) % 251


@functools.lru_cache(maxsize=None)  # content() asks at every request: the table is made once a range
def representable(dtype, low, high):
    """The finite values of a one-byte float dtype (float8) in [low, high), each once, in order."""
    every = torch.arange(256, dtype=torch.uint8).view(dtype).to(torch.float64)
    return every[torch.isfinite(every) & (every >= low) & (every < high)].unique()


def few_bits(dtype):
    """A float8 dtype: it rounds neighbouring integers (or fractions) to one value, so two requests'
    contents, or a source and the same bytes read two items on, could be equal and a confused key
    field would show nothing. Its values are taken from the ones it can hold exactly."""
    return dtype.is_floating_point and dtype.itemsize == 1


def content(n, dtype, shape=(4, 8), start=0):
    """Distinct, small, exact values for request n (``start``: see counting)."""
    x = counting(n, shape, start)
    if dtype is torch.bool:
        return x % 2 == 1
    if few_bits(dtype):
        table = representable(dtype, 1, math.inf)
        return table[x % len(table)].to(dtype)
    return (x + 1j * (x % 7)).to(dtype) if dtype.is_complex else x.to(dtype)


def written(t, writes):
    """t's version counter moved on as by ``writes`` writes, the last of which was just made. Not
    past 3 * 2**30: torch's counter is 32 bits wide, and one that wrapped round to a version an
    entry was put at would fool every cache keyed by it (a limit of torch, not of the cache). And
    never back: there, each write moves it on by one, as torch does, or an old version returns."""
    torch._C._autograd._unsafe_set_version_counter((t,), (max(t._version, min(t._version + writes - 1, 3 * 2**30)),))


def relayout(t, change):
    """``change(t)``: t's shape or stride changed in place, on the same memory, as torch allows it
    (an inference tensor only in inference mode, where it has no version counter to bump)."""
    with torch.inference_mode(t.is_inference()), torch.no_grad():
        change(t)


def project(t):
    with torch.no_grad():  # a value with a graph would keep its source alive
        # Computed once along each broadcast dimension and broadcast again: a source of tens of
        # millions of elements that spans few costs, and its value holds, what it spans.
        one = one_along_broadcast(t)
        try:
            value = (one * 2).add_(1)  # in place: one temporary of what the source spans, not two
        except (NotImplementedError, RuntimeError):  # float8 and uint16-64 have no arithmetic on CPU: in a wider dtype
            value = (one.to(torch.float64 if one.is_floating_point() else torch.int64) * 2).add_(1)
        return value if one is t else value.expand(t.shape)


def one_along_broadcast(t, *others):
    """t with each dimension longer than 1 in which t and all ``others`` have stride 0 cut to
    its first element: there every element is that one, in each of them."""
    for d in range(t.dim()):
        if t.shape[d] > 1 and all(x.stride(d) == 0 for x in (t, *others)):
            t = t.narrow(d, 0, 1)
    return t


def same(a, b):
    """Equal dtype, shape and values (NaN where the other has NaN: reinterpreted bits can be NaN)."""
    if not (isinstance(a, torch.Tensor) and a.dtype == b.dtype and a.shape == b.shape):
        return False
    a, b = a.detach(), b.detach()
    a, b = one_along_broadcast(a, b).resolve_conj(), one_along_broadcast(b, a).resolve_conj()
    return bool(((a == b) | (a.isnan() & b.isnan())).all())  # not torch.equal: complex32 has none on CPU


def check(t, where, which=0, expected=None, put=True):
    """Look up as a model does (and put on a miss, unless ``put`` is False); a hit must be
    the value of t's current content, ``expected`` if that was computed beforehand. Returns
    whether it hit."""
    try:
        value = caches[which].get(t)
        if value is None and put:
            caches[which].put(t, project(t) if expected is None else expected)
    except Exception as exc:
        raise AssertionError(f"the cache raised {{type(exc).__name__}}: {{exc}} at {{where}}") from None
    if value is not None and value is not expected and not same(value, project(t) if expected is None else expected):
        raise AssertionError(f"false hit at {{where}}: the cached value was computed from other data")
    return value is not None


def hygiene(*checks, where):
    """The contract's checks: each (passed, what broke)."""
    broken = [what for ok, what in checks if not ok]
    if broken:
        raise AssertionError(f"contract broken at {{where}}: {{'; '.join(broken)}}")


def in_thread(step):
    """Run a step in another thread, as a server's worker does; its failure is the step's."""
    failed = []
    worker = threading.Thread(target=lambda: failed.extend(_failure_of(step)), daemon=True)
    worker.start()
    worker.join({thread_timeout!r})
    if worker.is_alive():
        raise AssertionError("the cache did not return within {thread_timeout!r} s in another thread")
    if failed:
        raise failed[0]


def _failure_of(step):
    try:
        step()
    except Exception as exc:  # noqa: BLE001 - raised again in the main thread
        return [exc]
    return []


# The clock the cache reads: the time module's clocks, moved on by ``advance`` while the cache runs
# (in the thread that calls it); the harness's own timing, outside those calls, reads the real clocks.
import time  # noqa: E402

in_cache = threading.local()
skew = [0]  # seconds


def clocked(real, per_second):
    def now():
        value = real()
        return value + type(value)(skew[0] * per_second) if getattr(in_cache, "on", False) else value
    return now


CLOCKS = {{"time": 1, "monotonic": 1, "perf_counter": 1, "time_ns": 10**9, "monotonic_ns": 10**9,
          "perf_counter_ns": 10**9}}  # units a second
real_clocks = time.__dict__.setdefault("real_clocks", {{name: getattr(time, name) for name in CLOCKS}})
for name, per_second in CLOCKS.items():  # over the real ones: a snippet run twice moves them once
    setattr(time, name, clocked(real_clocks[name], per_second))


def advance(seconds):
    skew[0] += seconds


class Clocked:
    """A cache, each of its calls made on the moved clock."""

    def __init__(self, inner):
        self._inner = inner

    def __getattr__(self, name):
        attribute = getattr(self._inner, name)
        if not callable(attribute):
            return attribute

        def call(*args, **kwargs):
            in_cache.on = True
            try:
                return attribute(*args, **kwargs)
            finally:
                in_cache.on = False
        return call

    def __len__(self):
        return len(self._inner)
'''

# The search's own setup: its caches, one fixed address per slot, and the next request's tensor there.
PRELUDE = HELPERS + '''
caches = [Clocked({factory}(max_size={max_size})), Clocked({factory}(max_size=3))]
cache = caches[0]
arenas = [torch.empty({arena_bytes}, dtype=torch.uint8) for _ in range({slots})]  # one fixed address per slot
shared_arenas = [None] * {slots}  # made when a slot first needs one: a shared segment is slow to make
graveyard, fillers = [], []
in_use = [None] * {slots}  # a weak reference to the storage last made at each slot


def fresh(slot, n, dtype, shape=(4, 8), layout="contiguous", origin="allocator", kind="tensor"):
    """The next request's tensor at a slot's fixed address: a new tensor with its own
    version counter at 0 and its own content, as the allocator hands out a freed address."""
    if in_use[slot] is not None and not in_use[slot].expired():
        raise AssertionError("a freed source is still alive: the cache keeps it (or its storage) from being freed")
    if origin == "shared_memory" and shared_arenas[slot] is None:
        with torch.inference_mode(False):  # a plain tensor, as the other arenas are
            shared_arenas[slot] = torch.empty({arena_bytes}, dtype=torch.uint8).share_memory_()
    arena = shared_arenas[slot] if origin == "shared_memory" else arenas[slot]
    memory = rewrapped(arena[:max(math.prod(shape), 1) * dtype.itemsize], origin)
    if layout == "contiguous":
        strides = torch.empty(shape, device="meta").stride()
    elif layout == "transposed":
        strides = torch.empty(shape, device="meta").transpose(-1, -2).contiguous().transpose(-1, -2).stride()
    else:
        strides = torch.empty(shape, device="meta", memory_format=getattr(torch, layout)).stride()
    made = memory.view(dtype).as_strided(shape, strides).detach()  # no _base: that would keep memory alive
    with torch.no_grad():
        made.copy_(content(n, dtype, shape))
    in_use[slot] = StorageWeakRef(made.untyped_storage())
    return dress(made, kind)


def refreshes(t, where):
    \"\"\"LRU recency, in a cache of the round's size filled to its bound with t
    oldest: a hit refreshes t's entry, so the next insert evicts another.\"\"\"
    probe = {factory}(max_size={max_size})
    others = [content(n, t.dtype) for n in range({max_size})]
    try:
        probe.put(t, project(t))
        for other in others[1:]:
            probe.put(other, project(other))
        hit = probe.get(t) is not None
        probe.put(others[0], project(others[0]))
        kept = probe.get(t) is not None
        # a hit before the cache is full must refresh too: t, then all but two others, a hit, two more
        early = kept_early = True
        if {max_size} >= 3:
            probe = {factory}(max_size={max_size})
            probe.put(t, project(t))
            for other in others[1:-1]:
                probe.put(other, project(other))
            early = probe.get(t) is not None
            for other in (others[-1], others[0]):
                probe.put(other, project(other))
            kept_early = probe.get(t) is not None
    except Exception as exc:
        raise AssertionError(f"the cache raised {{type(exc).__name__}}: {{exc}} at {{where}}") from None
    hygiene((hit and early, "a fresh entry missed"), (kept, "the recently used entry was evicted"),
            (kept_early, "the entry used before the cache was full was evicted"), where=where)
'''


@dataclass
class SearchFailure:
    """A shrunk counterexample: its level, what went wrong, a runnable snippet."""

    level: Level
    message: str
    snippet: str
    seed: int | None  # --seed that finds it first (None: the systematic phase's ``row`` did)
    row: int | None = None  # with a seed: the row drawn with it

    @property
    def phase(self) -> str:
        return "search" if self.row is None else "probes" if self.seed is None else "drawn rows"

    @property
    def found_by(self) -> str:
        if self.row is None:
            return f"--seed {self.seed}"
        return f"probe row {self.row}" if self.seed is None else f"row {self.row} drawn with --seed {self.seed}"

    @property
    def contract(self) -> bool:
        """A hygiene failure (the contract's checks), not a safety one."""
        return self.message.startswith("contract broken")


def _imports(spec: str, factory) -> tuple[str, str]:
    """How a snippet gets the cache factory: (import lines, the name it is bound to).
    The search itself binds that name to ``factory`` directly: a factory built in
    memory (a mutant) has no import path."""
    if ":" in spec:
        module, _, attr = spec.partition(":")
        head = attr.split(".")[0]
        return f"from {module} import {head}", attr
    name = getattr(factory, "__name__", "make_cache")
    return f"from cache_impl import DESIGNS\n\n{name} = DESIGNS[{spec!r}]", name


@functools.lru_cache(maxsize=8192)  # about 2 KB a step: at most some 16 MB
def _compiled(code: str):
    return compile(code, "<string>", "exec")


def run_code(code: str, namespace: dict) -> None:
    """``exec(code, namespace)``, compiled once per text: the search replays the same
    steps many times while it shrinks, every example runs the same prelude, and the
    probes' rows are the same steps for every cache audited at one level."""
    exec(_compiled(code), namespace)  # noqa: S102 - our own text


def thread_limit(timeout: float | None) -> float | None:
    """How long ``in_thread`` waits for a step, which may make several calls: the time of six
    (None: no limit, as for the calls). The alarm that limits a call works in the main thread only."""
    return round(6 * timeout, 3) if timeout else None


def bind_factory(spec: str, factory, timeout: float | None) -> tuple[str, str, dict]:
    """What a snippet needs to call the cache: (its first lines, the name they bind the
    factory to, a namespace where that name is ``factory``, each call guarded by ``timeout``)."""
    imports, name = _imports(spec, factory)
    header = (f"import torch\nfrom torch.multiprocessing.reductions import StorageWeakRef\n"
              f"from torch.utils import dlpack\n{imports}\n")
    namespace = {"__name__": "audit_search", "torch": torch, "dlpack": torch.utils.dlpack,
                 "StorageWeakRef": StorageWeakRef}
    head = name.split(".")[0]
    made = guarded(factory, timeout=timeout, grad_mode=None)  # the steps set their own grad mode
    namespace[head] = made if head == name else _Namespace(name, made)
    return header, name, namespace


def make_machine(spec: str, factory, level: Level, max_size: int, record: dict, allowed: tuple = DTYPES,
                 timeout: float | None = DEFAULT_TIMEOUT, contract: str = "none"):
    """A state machine searching a ``factory(max_size=max_size)`` cache with the
    steps of ``level`` and below, on sources of the ``allowed`` dtypes only, and
    the hygiene checks ``contract`` asks for. The steps of the last failing run
    (hypothesis replays the shrunk one last) land in ``record``."""

    class CacheSearch(RuleBasedStateMachine):
        def __init__(self):
            super().__init__()
            self.lines: list[tuple[Level, str]] = []
            self.namespace: dict = {}
            self.live = [None] * SLOTS  # per slot: _slot_state() while a source lives there
            self.graveyard = 0  # live sources whose storage left their slot (L2 steps)
            # what was last made at each slot
            self.last_made = [dict(dtype="float32", shape=(4, 8), layout="contiguous", origin="allocator",
                                   kind="tensor") for _ in range(SLOTS)]
            self.habit = {"grad": "no_grad", "which": 0, "thread": False, "plain": True}
            self.in_request = False
            self.made = 0
            self.steps = 0
            self.max_size = max_size
            header, name, self.namespace = bind_factory(spec, factory, timeout)
            setup = PRELUDE.format(factory=name, max_size=max_size, slots=SLOTS, arena_bytes=ARENA_BYTES,
                                   thread_timeout=thread_limit(timeout))
            self.prelude = header + setup
            run_code(setup, self.namespace)

        # -- running text ---------------------------------------------------

        def run(self, step_level: Level, code: str) -> None:
            """Record a step and execute exactly that text."""
            self.lines.append((step_level, code))
            self.steps += 1
            try:
                run_code(code, self.namespace)
            except AssertionError as exc:  # raised by check(): a finding about the cache
                record["lines"] = list(self.lines)
                record["prelude"] = self.prelude
                record["error"] = str(exc)
                raise

        def next_content(self) -> int:
            self.made += 1
            return self.made

        @initialize(grad=st.sampled_from(list(GRAD_MODES)), which=st.sampled_from(range(CACHES)),
                    thread=st.booleans(), plain=st.booleans(), **SOURCE)
        def habits(self, grad, which, thread, plain, **made):
            """What this sequence mostly does: its sources' dtype, shape, layout, origin
            and kind, its grad mode, the cache it looks up in, and its thread. A condition
            that needs several steps alike is then as likely as one that needs one."""
            if plain:
                which, thread = 0, False
                made = {what: value if value in PLAIN[what] else PLAIN[what][0] for what, value in made.items()}
            self.habit = {"grad": grad, "which": which, "thread": thread, "plain": plain}
            self.last_made = [dict(made) for _ in range(SLOTS)]

        # -- request bounds (what an L3 cache needs to hear) ------------------

        @precondition(lambda self: not self.in_request)
        @rule()
        def request_begins(self):
            self.in_request = True
            self.run(Level.L0, "for c in caches:\n    getattr(c, 'begin_request', lambda: None)()")

        @precondition(lambda self: self.in_request)
        @rule()
        def request_ends(self):
            self.in_request = False
            self.run(Level.L0, "for c in caches:\n    getattr(c, 'end_request', lambda: None)()")

        # -- filling: many other live entries, of every age --------------------

        @precondition(lambda self: level < Level.L3 or self.in_request)
        @rule(count=st.sampled_from(FILLS), dtype=st.sampled_from(DTYPES))
        def more_entries(self, count, dtype):
            dtype = _pick(dtype, allowed)
            first = self.made + 1
            self.made += count
            bound = (f"\nhygiene((len(cache) <= {max_size}, f'{{len(cache)}} entries held, max_size {max_size}'), "
                     f"where='step {self.steps}: the bound')") if contract != "none" else ""
            self.run(Level.L0, f"for n in range({first}, {self.made + 1}):\n"
                               f"    fillers.append(content(n, torch.{dtype}))\n"
                               f"    check(fillers[-1], f'filler {{n}}')" + bound)

        @rule(hours=st.sampled_from(HOURS))
        def time_passes(self, hours):
            self.run(Level.L0, f"advance({hours * 3600})  # on the clock the cache reads")

        @precondition(lambda self: contract != "none")
        @rule()
        def clear(self):
            self.run(Level.L0, f"cache.clear()\nhygiene((len(cache) == 0, 'entries held after clear()'), "
                               f"(all(cache.get(f) is None for f in fillers[-3:]), 'a hit after clear()'), "
                               f"where='step {self.steps}: clear()')")

    for slot in range(SLOTS):
        _add_slot_rules(CacheSearch, slot, level, allowed, contract)
    CacheSearch.__name__ = f"AuditSearch_{level}_size{max_size}"
    return CacheSearch


def _add_slot_rules(machine, slot: int, level: Level, allowed: tuple, contract: str) -> None:
    """Steps on one slot's source (``s0``, ``s1``): lookups through its views, and
    every way it can change. Each has a precondition, so no step is a no-op."""
    name = f"s{slot}"

    def live(self):
        return self.live[slot] is not None

    def source(self):
        """The slot's live tensor: what the steps ask of it (dtype, conj bit, ...)
        is read from it, never tracked beside it."""
        return self.namespace[name]

    def dtype_of(self) -> str:
        return str(source(self).dtype).removeprefix("torch.")

    def versioned(self):
        return live(self) and not source(self).is_inference()

    def reinterpretable(self):
        """torch views a tensor as another dtype only without a conj bit and grad;
        and the other dtype must be one the cache takes."""
        return (not (source(self).is_conj() or source(self).requires_grad)
                and SIBLING.get(dtype_of(self)) in allowed)

    def view_name(kind):
        return f"v{slot}_{kind}"

    def forget(self):
        """The slot's source and views leave the namespace (their objects may live on)."""
        names = [name] + [view_name(k) for k in self.live[slot]["views"]]
        self.live[slot] = None
        return "del " + ", ".join(names)

    @precondition(lambda self: level < Level.L3 or self.in_request)
    @rule(view=st.sampled_from(LOOKUP_VIEWS), plain_view=st.sampled_from(PLAIN_LOOKUP_VIEWS),
          bits=st.sampled_from(LOOKUP_BITS), new_object=st.booleans(),
          repeat=st.sampled_from(REPEATS), requires_grad=st.booleans(), **{
              # mostly None: the sequence's habit, or what the last source at this slot had
              # (address reuse needs the same size)
              what: st.one_of(st.none(), st.none(), st.none(), strategy) for what, strategy in SOURCE.items()},
          grad=st.one_of(st.none(), st.none(), st.sampled_from(list(GRAD_MODES))),
          which=st.one_of(st.none(), st.none(), st.sampled_from(range(CACHES))),
          thread=st.one_of(st.none(), st.none(), st.booleans()))
    def lookup(self, view, plain_view, bits, new_object, repeat, requires_grad, grad, which, thread, **made):
        """Look up the slot's source through a view (its bits maybe changed after), in
        cache ``which``, in ``grad`` mode, maybe from another thread; where no source
        lives, the next request's tensor is made at the slot's address first, of the
        drawn dtype, shape, layout, origin and kind or those the last one there had."""
        grad = grad or self.habit["grad"]
        if self.habit["plain"]:
            which, thread, view = 0, False, plain_view
            made = {what: value if value in PLAIN[what] else None for what, value in made.items()}
        which = self.habit["which"] if which is None else which
        thread = self.habit["thread"] if thread is None else thread
        mode = GRAD_MODES[grad]
        if not live(self):
            made = {what: self.last_made[slot][what] if value is None else value for what, value in made.items()}
            made["dtype"] = _pick(made["dtype"], allowed)
            self.last_made[slot] = dict(made)
            dtype, shape, layout, kind = made["dtype"], made["shape"], made["layout"], made["kind"]
            gradable = getattr(torch, dtype).is_complex or (getattr(torch, dtype).is_floating_point
                                                             and getattr(torch, dtype).itemsize > 1)
            if layout != "contiguous" and (LAYOUTS[layout] > len(shape) or (LAYOUTS[layout] != len(shape)
                                                                             and layout != "transposed")):
                layout = "contiguous"  # a memory format exists for one rank only; transposing needs two
            if kind == "trainable_parameter" and (not gradable or grad == "inference"):
                kind = "frozen_parameter"
            self.live[slot] = _slot_state()
            make = (f"{name} = fresh({slot}, {self.next_content()}, torch.{dtype}, {shape}, {layout!r}, "
                    f"{made['origin']!r}, {kind!r})")
            if requires_grad and gradable and grad != "inference" and not kind.endswith("parameter"):
                make += ".requires_grad_()"  # a leaf, as a parameter is
            self.run(Level.L0, f"with {mode}:\n    {make}" if mode else make)
        view, expr = view_of(self, view, bits, mode)
        state = self.live[slot]
        if view != "itself" and not new_object:
            if view not in state["views"]:
                state["views"].add(view)
                self.run(Level.L0, f"{view_name(view)} = {expr}")
            expr = view_name(view)
        call = f"check({expr}, 'step {self.steps}: {name} {view}'" + (f", {which})" if which else ")")
        if repeat > 1:
            call = f"for _ in range({repeat}):\n    {call}"
        if mode:
            call = f"with {mode}:\n" + _indent(call)
        if thread:  # grad mode is per thread: the step sets its own
            call = f"def step():\n{_indent(call)}\n\n\nin_thread(step)"
        self.run(Level.L0, call)

    def view_of(self, view, bits, mode):
        """(name, expression) of the drawn view with its bits changed; the source itself
        where torch refuses that view of it or it reads a dtype the cache does not take."""
        expr = VIEWS[view].format(s=name)
        if bits == "sibling_dtype" and not reinterpretable(self):
            bits = None
        if bits:
            sibling = SIBLING.get(dtype_of(self))
            expr = f"torch.view_as_real({expr})" if bits == "view_as_real" else expr + BITS[bits].format(
                sibling=sibling)
            view = f"{view}_{bits}"
        try:
            with eval(mode, self.namespace) if mode else contextlib.nullcontext():  # noqa: S307 - our own text
                made = eval(expr, self.namespace)  # noqa: S307 - as the step will run it
        except (RuntimeError, ValueError, IndexError, TypeError):
            return "itself", name
        if str(made.dtype).removeprefix("torch.") not in allowed:
            return "itself", name
        return view, expr

    def update_in_place(self, writes):
        """In place: a version bump, or as many as ``writes`` (the counter moved on at the cost of one
        write: a server's buffer written at every step); on an inference tensor, a rewrite with none (L3)."""
        rewrite = f"{name}.copy_(content({self.next_content()}, {name}.dtype, {name}.shape))"
        if source(self).is_inference():
            self.run(Level.L3, f"with torch.inference_mode():\n    {rewrite}")
        else:
            more = f"\nwritten({name}, {writes})" if writes > 1 else ""
            self.run(Level.L0, f"with torch.no_grad():\n    {rewrite}{more}")

    def reinterpret(self, how):
        """``.data =`` a view of its own memory: other layout, dtype or conj bit; no version bump."""
        dtype = dtype_of(self)
        if how == "conj" and not source(self).is_complex():
            how = "sibling_dtype"
        if how == "sibling_dtype" and not reinterpretable(self):
            how = "first_half"
        if how == "sibling_dtype":
            self.run(Level.L0, f"{name}.data = {name}.view(torch.{SIBLING.get(dtype, dtype)})")
        elif how == "conj":
            self.run(Level.L0, f"{name}.data = {name}.conj()")
        else:  # a (4, 4) window at one of two offsets of its own storage; all of a smaller one, flat
            src = source(self)
            elements = src.untyped_storage().nbytes() // src.element_size()
            offset, shape, stride = (16 if how == "second_half" else 0, (4, 4), (4, 1)) if elements >= 32 else (
                0, (elements,), (1,))
            self.run(Level.L0, f"{name}.data = torch.empty(0, dtype={name}.dtype).set_("
                               f"{name}.untyped_storage(), {offset}, {shape}, {stride})")

    def change_layout_in_place(self, how):
        """Shape or stride changed in place, on the same memory: a version bump where the source has
        a counter (an inference tensor has none, and then shape and stride are all that tell)."""
        src = source(self)
        other = other_order(tuple(src.shape), src.stride()) if how == "another order" else None
        if how == "transpose_" and src.dim() >= 2:
            change = "t.transpose_(0, -1)"
        elif other:  # the shape kept: the stride alone changes
            change = f"t.as_strided_(t.shape, {other}, t.storage_offset())"
        else:
            change = "t.unsqueeze_(0)"
        self.run(Level.L0, f"relayout({name}, lambda t: {change})")

    def free(self):
        self.run(Level.L1, forget(self))

    def swap_storage(self):
        """``set_()`` to other memory: the source lives on, its address is free."""
        self.graveyard += 1
        self.run(Level.L2, f"with torch.no_grad():\n    {name}.set_(torch.empty(0, dtype={name}.dtype))\n"
                           f"graveyard.append({name})\n" + forget(self))

    def rebind_away(self):
        """``.data =`` other memory (no version bump): the source lives on, its address is free."""
        self.graveyard += 1
        self.run(Level.L2, f"{name}.data = torch.empty_like({name})\ngraveyard.append({name})\n" + forget(self))

    def rebind_back(self):
        """A source whose storage left is rebound to a fresh tensor at this slot's
        address: the same object, maybe its old address, layout and version."""
        self.graveyard -= 1
        self.run(Level.L2, f"{name} = graveyard.pop()\n"
                           f"{name}.data = fresh({slot}, {self.next_content()}, {name}.dtype)")
        self.live[slot] = _slot_state()

    def rewrite_through_alias(self):
        """Content rewritten through another tensor on the same storage, which has
        its own version counter: the source's version does not move (L3)."""
        self.run(Level.L3, f"alias = torch.empty(0, dtype={name}.dtype).set_({name}.untyped_storage(), "
                           f"{name}.storage_offset(), {name}.shape, {name}.stride())\n"
                           f"with torch.no_grad():\n"
                           f"    alias.copy_(content({self.next_content()}, {name}.dtype, {name}.shape))\ndel alias")

    def refreshes(self, grad):
        """LRU recency on this source, in this grad mode."""
        call = f"refreshes({name}, 'step {self.steps}: {name}')"
        mode = GRAD_MODES[grad]
        self.run(Level.L0, f"with {mode}:\n    {call}" if mode else call)

    rules = {"lookup": lookup,
             "update_in_place": precondition(
                 lambda self: live(self) and (not source(self).is_inference() or level >= Level.L3)
                 and (level < Level.L3 or not self.in_request))(rule(writes=st.sampled_from(WRITES))(update_in_place)),
             "reinterpret": precondition(versioned)(
                 rule(how=st.sampled_from(REINTERPRETATIONS))(reinterpret)),
             "change_layout_in_place": precondition(live)(
                 rule(how=st.sampled_from(LAYOUT_CHANGES))(change_layout_in_place))}
    if contract == "lru":  # a probe cache filled to the bound: where that is cheap (and LRU differs from FIFO)
        rules["refreshes"] = precondition(lambda self: live(self) and 2 <= self.max_size <= RECENCY_PROBE_MAX)(
            rule(grad=st.sampled_from(list(GRAD_MODES)))(refreshes))
    if level >= Level.L1:
        rules["free"] = precondition(live)(rule()(free))
    if level >= Level.L2:
        rules["swap_storage"] = precondition(versioned)(rule()(swap_storage))
        rules["rebind_away"] = precondition(versioned)(rule()(rebind_away))
        rules["rebind_back"] = precondition(lambda self: not live(self) and self.graveyard > 0)(rule()(rebind_back))
    if level >= Level.L3:
        rules["rewrite_through_alias"] = precondition(
            lambda self: versioned(self) and not self.in_request)(rule()(rewrite_through_alias))
    for rule_name, fn in rules.items():
        fn.__name__ = fn.__qualname__ = f"{rule_name}_{slot}"
        setattr(machine, f"{rule_name}_{slot}", fn)


def other_order(shape: tuple, stride: tuple) -> tuple | None:
    """Strides that lay a dense tensor's elements in another order, on the same memory, the shape
    kept (column-major for a row-major one, else row-major); None where there is no such change
    (not dense, or fewer than two dimensions longer than 1)."""
    long = sorted((st, size) for size, st in zip(shape, stride) if size > 1)
    dense = all(st == math.prod(size for _, size in long[:i]) for i, (st, _) in enumerate(long))
    if len(long) < 2 or not dense:
        return None
    row_major = torch.empty(shape, device="meta").stride()
    if all(a == b for a, b, size in zip(stride, row_major, shape) if size > 1):
        return torch.empty(shape[::-1], device="meta").stride()[::-1]  # column-major
    return row_major


def _indent(code: str) -> str:
    return "\n".join("    " + line for line in code.splitlines())


def _pick(dtype: str, allowed: tuple) -> str:
    """The drawn dtype, or the first the cache takes."""
    return dtype if dtype in allowed else allowed[0]


class _Namespace:
    """Stands for ``Outer`` in a spec ``module:Outer.make``, so the snippet's dotted name resolves."""

    def __init__(self, dotted: str, factory):
        *middle, last = dotted.split(".")[1:]
        target = self
        for part in middle:
            setattr(target, part, _Namespace.__new__(_Namespace))
            target = getattr(target, part)
        setattr(target, last, factory)


def _slot_state() -> dict:
    """What a slot's live tensor does not say itself: which views of it were kept."""
    return {"views": set()}


def coverage() -> list[tuple[str, str]]:
    """What the search draws, from the strategies' own constants: (dimension, values)."""
    def names(values):
        return ", ".join(f"`{v}`" for v in values)
    return [
        ("max_size", f"{names(SIZES)}: one per round of {EXAMPLES} sequences of up to {STEPS} steps, in turn"),
        ("dtypes", f"{names(DTYPES)}: every dtype torch defines but {names(LEFT_OUT)} (CPU torch cannot write "
                   "numbers into those); a view reads a source as the most alike of its item size"),
        ("shapes", ", ".join(f"`{name}` {shape}" for name, shape in SHAPES.items())
                   + f", or any of rank 0 to 6 with sizes drawn from {DIM_SIZES}"),
        ("memory formats", names(LAYOUTS)),
        ("storage origins", names(ORIGINS)),
        ("tensor kinds", names(KINDS)),
        ("views looked up", f"{names(VIEWS)}; kept or made anew per lookup; each maybe followed by "
                            f"{names(BITS)}"),
        ("grad modes", names(GRAD_MODES) + "; sources requiring grad or not"),
        ("time", f"at any step, the clock the cache reads moves on {names(HOURS)} hours at once (during the "
                 "cache's calls only, as in the probes)"),
        ("habits", "each sequence draws its sources' dtype, shape, memory format, origin and kind, its grad "
                   "mode, cache and thread; a step keeps the habit or draws anew; half the sequences keep to "
                   f"the plain case: dtypes {names(PLAIN['dtype'])}, shapes {', '.join(map(str, PLAIN['shape']))}, "
                   "contiguous, torch's allocator, the first cache, the main thread, views "
                   f"{names(PLAIN_VIEWS)}"),
        ("history", f"other entries added {FILLS[0]} to {max(FILLS)} at a time ({names(FILLS)}), "
                    f"{names(REPEATS)} lookups in a row, {CACHES} caches, lookups from another thread, "
                    f"request bounds"),
        ("changes to a live source", f"in place ({names(WRITES)} version bumps at once), reinterpreted with `.data =` "
                                     f"({names(REINTERPRETATIONS)}); its shape or stride changed in place "
                                     f"({names(LAYOUT_CHANGES)}); freed and its address reused (L1); "
                                     f"storage swapped, rebound away and back (L2); rewritten through an alias (L3)"),
        ("contract", f"`bounded`: the bound after each fill, `clear()`; `lru`: also recency, in a probe cache "
                     f"of the round's size (2 to {RECENCY_PROBE_MAX})"),
    ]


def coverage_markdown() -> str:
    """``coverage()`` as the list docs/audit.md shows."""
    return "\n".join(f"- **{what}**: {values}" for what, values in coverage()) + "\n"


def search(spec: str, factory, level: Level, budget: float, seed: int = 0, rounds: int | None = None,
           timeout: float | None = DEFAULT_TIMEOUT, unsupported: frozenset = frozenset(),
           examples_per_round: int = EXAMPLES, steps: int = STEPS, contract: str = "none",
           shrink: bool = True, tally: dict | None = None) -> SearchFailure | None:
    """Search ``factory`` with the steps of ``level`` and below for ``budget``
    seconds, in rounds of examples seeded ``seed``, ``seed + 1``, ..., each round
    with the next cache size of ``SIZES``; return the first failure, shrunk, or None.
    ``rounds`` caps the rounds too, for a search that must not depend on speed.
    Sources of ``unsupported`` torch dtypes are never made; each call into the
    cache has ``timeout`` seconds. ``contract`` (``bounded`` or ``lru``) adds its
    hygiene checks; a failure of those is a :attr:`SearchFailure.contract` one.
    ``shrink=False`` returns the failure as first found, unshrunk (whether there is
    one, sooner: shrinking is most of the time a found failure takes). ``tally["rounds"]``,
    if given, counts the rounds begun: how much of the search ran."""
    allowed = allowed_dtypes(unsupported)
    if not allowed:
        return None
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # small tensors: one thread is faster, and steadier on a shared machine
    try:
        with alarm_handler():  # installed once for the search's calls, each of which has its timeout
            return _search_rounds(spec, factory, level, budget, seed, rounds, examples_per_round, steps, allowed,
                                  timeout, contract, shrink, {} if tally is None else tally)
    finally:
        torch.set_num_threads(threads)


def allowed_dtypes(unsupported: frozenset) -> tuple:
    """The dtypes sources are made of: all but the ``unsupported`` torch dtypes."""
    return tuple(name for name in DTYPES if getattr(torch, name) not in unsupported)


def _search_rounds(spec, factory, level, budget, seed, rounds, examples_per_round, steps, allowed, timeout,
                   contract, shrink, tally):
    deadline = time.monotonic() + budget
    round_seed = seed
    while time.monotonic() < deadline and (rounds is None or round_seed - seed < rounds):
        tally["rounds"] = round_seed - seed + 1
        record: dict = {}
        max_size = SIZES[round_seed % len(SIZES)]
        machine = hypothesis.seed(round_seed)(make_machine(spec, factory, level, max_size, record, allowed, timeout,
                                                                  contract))
        config = settings(max_examples=examples_per_round, stateful_step_count=steps, deadline=None,
                          database=None, suppress_health_check=list(HealthCheck),
                          phases=[Phase.generate, Phase.shrink] if shrink else [Phase.generate],
                          report_multiple_bugs=False)
        try:
            run_state_machine_as_test(machine, settings=config)
        except Exception as exc:  # noqa: BLE001 - any failure of the cache: the record says what it was
            interrupt = _ctrl_c_behind(exc)
            if interrupt is not None:
                raise interrupt from None
            if "lines" not in record:
                raise
            return _failure(record, round_seed)
        round_seed += 1
    return None


def _ctrl_c_behind(exc: BaseException) -> CtrlC | None:
    """The user's Ctrl-C that ``exc`` was raised while handling, if any. A Ctrl-C landing as
    hypothesis starts its engine meets one of hypothesis' own asserts in its handler, and the
    AssertionError would replace it."""
    seen = exc.__context__
    while seen is not None:
        if isinstance(seen, CtrlC):
            return seen
        seen = seen.__context__
    return None


def _failure(record: dict, seed: int) -> SearchFailure:
    lines = record["lines"]
    # An exception on a plain tensor is broken at any level; a false hit belongs to
    # the highest level among the steps that led to it.
    raised = record["error"].startswith("the cache raised")
    level = Level.L0 if raised else max(step_level for step_level, _ in lines)
    body = "\n".join(code for _, code in lines)
    snippet = f"{record['prelude']}\n\n# the steps the search shrank the failure to\n{body}\n"
    return SearchFailure(level, record["error"], snippet, seed)
