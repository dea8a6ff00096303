"""Where two runs of the same code part: record the tensor operations of a run, find the first divergence.

    result, trace = record(fn, *args, **kwargs)   # runs fn once, recording its tensor operations
    with recording(max_ops=N) as trace: ...       # the same around a block (record uses MAX_OPS)
    trace.to_json() -> dict; Trace.from_json(d) -> Trace   # plain JSON: traces cross processes
    d = first_divergence(trace_a, trace_b)        # a Divergence, or None where the runs agree
    d.format() -> "path:line: message"             # one line, like a linter
    d.to_json() -> {path, line, function, message, op, index, kind, run,
                    module: {qualname, class, source: "file:line"} or None,
                    hooks: ["forward hook on blocks.1: smooth (/x/model.py:12)", ...],
                    other: {path, line, function, op, index} or None}

Pass the reference run first (never-reuse allocator, or the request served alone) and
the suspect run second: where both sides could be named, the suspect's is.

A trace is the sequence of events of one run, in the order they happened:

- an *operation*: every call into torch that a ``TorchFunctionMode`` sees (``torch.*``,
  Tensor methods, ``torch.nn.functional.*``) but those that only read metadata (shape,
  dtype, ``data_ptr``: an address differs between runs by design), with a digest of
  each argument taken before the call and of each result;
- an *entry*: a tensor that no recorded operation produced turns up in the code under
  test: as an argument or local variable of one of its functions (itself or in a tuple;
  a dict or list a variable names is state kept for later, and what is taken out of it
  enters where it is), as a value one of them returns (a line tracer,
  ``sys.settrace``, looks), or as an operand. A tensor
  handed back by a Python-level cache (``lru_cache``, a dict keyed by address, a memo
  of the last result) runs no operation: it enters this way, at the line where the code
  under test received it. Parameters enter silently; the operations that read them
  still digest their values;
- the result of ``fn``, last.

Each event names the frame of the code under test that issued it: the innermost frame
outside torch, numpy, the standard library and this project (code in other
site-packages, such as diffusers, is code under test); when there is none, the innermost
in ``repro`` or ``cache_impl`` (the models and designs this project demonstrates). Its
module is the innermost ``nn.Module`` being called, read from the frames of
``Module._call_impl`` on the stack (exact inside forward hooks, which run there, and
needs no global hook that would change how every module is called), with its qualified
name in the outermost module being called, its class and source, and the hooks and
forward wrappers installed on it and its ancestors.

``first_divergence`` walks both traces in step; the runs part at the first event where

- kind, operation or place differ: the control flow parted. Where one side is an entry,
  that side is named: a value came from outside the traced tensor flow where the other
  run computed one. Unless the other run holds that same value (bitwise): it computes
  or takes it in within ``CATCH_UP`` events (a cache did its job, hit in one run and
  missed in the other), or it had it already (a constant first read on a path the other
  run skipped); then the walk goes on where both are back in step;
- the arguments differ although every earlier event agreed: a Python value, or a tensor
  changed outside the traced operations;
- the arguments agree and the results differ: state the arguments do not show (for an
  entry: a stored tensor with other values).

Digests are exact for tensors up to ``EXACT_BYTES`` (a hash of their bytes); larger ones
are digested by float64 sum and absolute sum and a hash of a strided sample. The
recorder keeps no tensor alive (weak references only), so the allocator sees the same
frees as without it, though digests allocate scratch memory of their own. It records the
calling thread and replaces any ``sys.settrace`` tracer (a debugger's, coverage's) while
it runs. After ``max_ops`` events it stops recording and marks the trace truncated:
traces that agree as far as a truncated one goes give None.
"""

from __future__ import annotations

import functools
import gc
import hashlib
import inspect
import linecache
import os
import re
import sys
import sysconfig
import weakref
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import torch
from torch.multiprocessing.reductions import StorageWeakRef
from torch.overrides import TorchFunctionMode, resolve_name

from harness.environment import ROOT as _ROOT

MAX_OPS = 100_000  # events per trace; about 0.35 KB each in memory
EXACT_BYTES = 1 << 20  # tensors up to this size are digested by a hash of all their bytes
SAMPLE = 4096  # elements hashed from a larger tensor, evenly strided
FORMAT = 1  # version of the JSON form
CATCH_UP = 20_000  # events searched ahead for a value one run took in and the other computed

OP, ENTRY, RESULT = "op", "entry", "result"
# What first_divergence found: the control flow parted, an argument differs, or the
# same arguments gave different results.
FLOW, ARGUMENT, STATE = "flow", "argument", "state"

# Tensor methods that read metadata only: no value flows through them, and data_ptr's
# answer is an address, which differs between runs by design.
METADATA = frozenset({
    "size", "dim", "ndimension", "stride", "numel", "nelement", "is_contiguous", "data_ptr", "element_size",
    "storage_offset", "untyped_storage", "storage", "is_floating_point", "is_complex", "is_signed", "get_device",
    "dim_order", "is_inference", "is_shared", "is_pinned", "has_names", "is_set_to", "_is_view", "__len__",
    "__repr__", "__str__", "__format__", "__hash__", "__dir__", "__reduce_ex__", "register_hook", "retain_grad",
    "requires_grad_", "_version",
})
# Operations that allocate memory and leave it unset. Their results, the views of them
# and what is written into them in place are digested by shape and dtype only, until an
# operation reads them into new memory (then by value: reading memory still unset is
# a real difference).
ALLOCATIONS = frozenset({
    "torch.empty", "torch.empty_like", "torch.empty_strided", "torch.empty_permuted", "torch.Tensor.new_empty",
    "torch.Tensor.new_empty_strided", "torch.Tensor.resize_", "torch.Tensor.resize_as_",
})
IN_PLACE_DUNDERS = frozenset({
    "__setitem__", "__iadd__", "__isub__", "__imul__", "__imatmul__", "__itruediv__", "__ifloordiv__",
    "__imod__", "__ipow__", "__iand__", "__ior__", "__ixor__", "__ilshift__", "__irshift__",
})

# --- where frames belong -------------------------------------------------------------

SKIP, PROJECT, UNDER_TEST = 0, 1, 2


def _package_dirs(names) -> list[str]:
    import importlib.util
    dirs = []
    for name in names:
        spec = importlib.util.find_spec(name)
        for location in (spec.submodule_search_locations or []) if spec else []:
            dirs.append(os.path.realpath(location) + os.sep)
    return dirs


_TOOL_DIRS = tuple(_package_dirs(["torch", "numpy", "functorch", "torchgen"]) +
                   [str(_ROOT / "harness") + os.sep])
_PROJECT_DIRS = tuple(str(_ROOT / name) + os.sep for name in ("repro", "cache_impl"))
_STDLIB_DIRS = tuple({os.path.realpath(sysconfig.get_paths()[key]) + os.sep for key in ("stdlib", "platstdlib")})
_CATEGORY: dict[str, int] = {}


def code_category(filename: str) -> int:
    """SKIP (torch, numpy, the standard library, harness), PROJECT (repro, cache_impl)
    or UNDER_TEST (everything else, other site-packages included)."""
    category = _CATEGORY.get(filename)
    if category is None:
        path = "" if filename.startswith("<") else os.path.realpath(filename)
        if not path or path.startswith(_TOOL_DIRS):  # no source ("<string>", frozen), or a tool
            category = SKIP
        elif path.startswith(_PROJECT_DIRS):
            category = PROJECT
        elif "site-packages" in path.split(os.sep) or "dist-packages" in path.split(os.sep):
            category = UNDER_TEST
        else:
            category = SKIP if path.startswith(_STDLIB_DIRS) else UNDER_TEST
        _CATEGORY[filename] = category
    return category


_CALL_IMPL = torch.nn.Module._call_impl.__code__
_SOURCES: dict = {}


def _source_of(obj) -> str:
    """'file:line' where a function or class is defined, or '?'."""
    code = getattr(obj, "__code__", None)
    if code is not None:
        return f"{code.co_filename}:{code.co_firstlineno}"
    if obj not in _SOURCES:
        _SOURCES[obj] = _class_source(obj) if isinstance(obj, type) else "?"
    return _SOURCES[obj]


def _class_source(cls: type) -> str:
    """'file:line' of a class statement: the last ``class Name`` line before its first
    method (inspect would parse the whole file, which costs more than a traced forward)."""
    try:
        path = inspect.getsourcefile(cls)
    except TypeError:  # built-in
        return "?"
    if not path:
        return "?"
    firsts = [f.__code__.co_firstlineno for f in vars(cls).values() if hasattr(f, "__code__")]
    limit = min(firsts) if firsts else None
    pattern = re.compile(rf"\s*class\s+{re.escape(cls.__name__)}\b")
    lines = linecache.getlines(path)
    found = [i + 1 for i, text in enumerate(lines[:limit]) if pattern.match(text)]
    return f"{path}:{found[-1] if found else '?'}"


def _describe_callable(obj) -> str:
    """'qualname (file:line)' of a hook or a replaced forward, through partials and bound methods."""
    while isinstance(obj, functools.partial):
        obj = obj.func
    obj = getattr(obj, "__func__", obj)
    if not hasattr(obj, "__code__") and not isinstance(obj, type):  # a callable object: its class says what
        return f"{type(obj).__qualname__} ({_source_of(type(obj))})"
    return f"{getattr(obj, '__qualname__', repr(obj))} ({_source_of(obj)})"


def _hooks(chain: list[tuple[str, torch.nn.Module]]) -> list[str]:
    """Hooks and forward wrappers on each module of ``chain`` (the module first, then its ancestors)."""
    from torch.nn.modules import module as nn_module
    found = []
    for qualname, m in chain:
        where = qualname or "the root module"
        found += [f"forward pre-hook on {where}: {_describe_callable(h)}" for h in m._forward_pre_hooks.values()]
        found += [f"forward hook on {where}: {_describe_callable(h)}" for h in m._forward_hooks.values()]
        registry = m.__dict__.get("_diffusers_hook")  # diffusers' HookRegistry, if it installed one
        for name, hook in (getattr(registry, "hooks", None) or {}).items():
            found.append(f"diffusers hook {name!r} on {where}: {type(hook).__qualname__} ({_source_of(type(hook))})")
        if "forward" in m.__dict__:
            found.append(f"forward replaced on {where}: {_describe_callable(m.__dict__['forward'])}")
    found += [f"global forward pre-hook: {_describe_callable(h)}" for h in nn_module._global_forward_pre_hooks.values()]
    found += [f"global forward hook: {_describe_callable(h)}" for h in nn_module._global_forward_hooks.values()]
    return found


# --- digests -------------------------------------------------------------------------

def _hash(data) -> str:
    return hashlib.blake2b(data, digest_size=8).hexdigest()


def tensor_digest(t: torch.Tensor) -> str:
    """'dtype(shape):hash', equal exactly when the values are (bitwise, up to EXACT_BYTES)."""
    head = _head(t)
    try:
        data = t.detach().resolve_conj().resolve_neg()
        if data.numel() == 0:
            return head
        if data.is_complex():
            data = torch.view_as_real(data)
        flat = data.reshape(-1)
        if flat.numel() * flat.element_size() <= EXACT_BYTES:
            return f"{head}:{_hash(flat.contiguous().view(torch.uint8).cpu().numpy())}"
        step = -(-flat.numel() // SAMPLE)
        sample = flat[::step].contiguous().view(torch.uint8).cpu().numpy()
        wide = flat.to(torch.float64)
        sums = f"{wide.sum().item()!r}/{wide.abs().sum().item()!r}"
        return f"{head}:{_hash(sample)}:{_hash(sums.encode())}"
    except Exception:  # meta, sparse, quantized, nested, fake: never fail the code under test
        return f"{head}:opaque {type(t).__name__} {t.layout}"


def _head(t: torch.Tensor) -> str:
    """'float32(4,8)': dtype and shape."""
    try:
        shape = ",".join(map(str, t.shape))
    except Exception:  # a nested tensor has no single shape
        shape = "?"
    return f"{str(t.dtype).removeprefix('torch.')}({shape})"


def _unset_digest(t: torch.Tensor) -> str:
    """The digest of a tensor whose memory is not (known to be) written yet: its
    contents are whatever the allocator's last user left there."""
    return f"{_head(t)}:unset"


def _storage(t: torch.Tensor) -> int | None:
    try:
        return t.untyped_storage().data_ptr() or None
    except Exception:  # no storage (meta, sparse, nested): never fail the code under test
        return None


_PLAIN = (bool, int, float, complex, str, bytes, torch.dtype, torch.device, torch.layout, torch.memory_format,
          slice, type(None), type(Ellipsis))


def value_digest(value) -> str:
    """A digest of any argument or result: tensors by value, plain values by repr,
    generators by state, arrays and images by bytes, anything else by type."""
    if isinstance(value, torch.Tensor):
        return tensor_digest(value)
    if isinstance(value, _PLAIN):
        text = repr(value)
    elif isinstance(value, torch.Size):
        text = repr(tuple(value))
    elif isinstance(value, torch.Generator):
        return f"generator:{tensor_digest(value.get_state())}"
    elif callable(getattr(value, "tobytes", None)):  # numpy arrays, PIL images
        try:
            shape = getattr(value, "shape", None) or getattr(value, "size", "")
            return f"{type(value).__name__}{shape}:{_hash(value.tobytes())}"
        except Exception:  # never fail the code under test
            text = type(value).__qualname__
    else:
        text = type(value).__qualname__
    return text if len(text) <= 40 else f"{type(value).__name__}:{_hash(text.encode())}"


def _leaves(value, depth: int = 0) -> list:
    """The values inside nested tuples, lists and dicts (the dicts' values), in order."""
    if depth < 6 and isinstance(value, (list, tuple)) and not isinstance(value, torch.Size):
        return [leaf for item in value for leaf in _leaves(item, depth + 1)]
    if depth < 6 and isinstance(value, dict):
        return [leaf for item in value.values() for leaf in _leaves(item, depth + 1)]
    return [value]


# --- the trace -----------------------------------------------------------------------

@dataclass(frozen=True)
class Event:
    kind: str  # OP, ENTRY or RESULT
    name: str  # the operation; for an entry, how the tensor entered ("local 'kv'")
    site: int  # index into Trace.sites
    module: int  # index into Trace.modules, -1 when no module was being called
    inputs: tuple  # digests of the arguments
    outputs: tuple  # digests of the results
    sources: tuple  # per argument: the event that produced it; -1 a parameter (or past the cap); None not a tensor


class Trace:
    """The events of one run, with the places (path, line, function) and modules they name."""

    def __init__(self, max_ops: int = MAX_OPS):
        self.events: list[Event] = []
        self.sites: list[tuple[str, int, str]] = []
        self.modules: list[dict] = []  # {qualname, class, source, hooks}
        self.max_ops = max_ops
        self.truncated = False
        self.label: str | None = None  # how messages name this run (default: a or b)

    def to_json(self) -> dict:
        return {"format": FORMAT, "label": self.label, "max_ops": self.max_ops, "truncated": self.truncated,
                "sites": [list(s) for s in self.sites], "modules": self.modules,
                "events": [[e.kind, e.name, e.site, e.module, list(e.inputs), list(e.outputs), list(e.sources)]
                           for e in self.events]}

    @classmethod
    def from_json(cls, data: dict) -> "Trace":
        """The trace ``to_json`` wrote; ValueError (one line) for anything else."""
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise ValueError(f"not a localisation trace (format {FORMAT})")
        try:
            trace = cls(int(data["max_ops"]))
            trace.label, trace.truncated = data["label"], bool(data["truncated"])
            trace.sites = [(str(p), int(line), str(f)) for p, line, f in data["sites"]]
            trace.modules = [{"qualname": m["qualname"], "class": m["class"], "source": m["source"],
                              "hooks": list(m["hooks"])} for m in data["modules"]]
            trace.events = [Event(kind, name, int(site), int(module), tuple(inputs), tuple(outputs), tuple(sources))
                            for kind, name, site, module, inputs, outputs, sources in data["events"]]
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"malformed localisation trace: {exc!r}") from None
        if any(not 0 <= e.site < len(trace.sites) or not -1 <= e.module < len(trace.modules)
               for e in trace.events):
            raise ValueError("malformed localisation trace: an event names a place or module it does not list")
        return trace


class _Recorder(TorchFunctionMode):
    """Appends an event for every operation and every entry while active."""

    def __init__(self, trace: Trace):
        super().__init__()
        self.trace = trace
        self.active = False
        self.busy = False  # set while the recorder itself runs torch code: not the code under test
        # Set while the garbage collector runs: what runs then (gc.callbacks, finalizers of cyclic
        # garbage) runs when allocation counts say, not where the pipeline's flow is, so two runs
        # of the same flow would part there by chance.
        self.collecting = False
        self.known: dict[int, tuple] = {}  # id(tensor) -> (weak reference, event that produced it)
        self.site_index: dict[tuple, int] = {}
        self.module_index: dict[int, tuple] = {}  # id(module) -> (weak reference, index into trace.modules)
        self.names: dict[int, tuple] = {}  # id(root) -> (weak reference, {id(module): qualname}, {qualname: module})
        self.last_line: dict[int, int] = {}  # id(frame) -> the line it ran last
        # Storages an allocation left unset (torch.empty and its kin): what they hold is whatever was
        # there before. By storage, not by tensor: every tensor on one, its views and a Parameter
        # wrapping it (nn.Linear's weight before its init), is unset. Key: the storage's own
        # address; value: torch's weak reference to it, which keeps that address from being reused.
        self.unset: dict[int, StorageWeakRef] = {}

    # -- events ---------------------------------------------------------------------

    def _append(self, event: Event) -> int | None:
        if len(self.trace.events) >= self.trace.max_ops:
            self.trace.truncated, self.active = True, False
            return None
        self.trace.events.append(event)
        return len(self.trace.events) - 1

    def _site(self, path: str, line: int, function: str) -> int:
        key = (path, line, function)
        if key not in self.site_index:
            self.site_index[key] = len(self.trace.sites)
            self.trace.sites.append(key)
        return self.site_index[key]

    def _source(self, t: torch.Tensor) -> int | None:
        """The event that produced ``t``, -1 for a parameter, None if nothing recorded it."""
        key = id(t)
        hit = self.known.get(key)  # address-reuse: validated (a dead object's entry is deleted below)
        if hit is not None:
            if hit[0]() is t:
                return hit[1]
            del self.known[key]  # another object had this id: forget it
        if isinstance(t, torch.nn.Parameter):
            self.known[id(t)] = (weakref.ref(t), -1)
            return -1
        return None

    def _produced(self, t: torch.Tensor, index: int) -> None:
        self.known[id(t)] = (weakref.ref(t), index)

    def _enter(self, t: torch.Tensor, how: str, site: int, module: int) -> int:
        index = self._append(Event(ENTRY, how, site, module, (), (tensor_digest(t),), ()))
        if index is not None:
            self._produced(t, index)
        return -1 if index is None else index

    # -- where: the frame under test and the module being called --------------------

    def _where(self, frame) -> tuple[int, int]:
        """(site, module) for an event issued from ``frame`` and its callers."""
        site = fallback = None
        inner = root = None
        while frame is not None:
            code = frame.f_code
            if code is _CALL_IMPL:
                m = frame.f_locals.get("self")
                inner = m if inner is None else inner
                root = m
            elif site is None:
                category = code_category(code.co_filename)
                if category == UNDER_TEST:
                    site = frame
                elif category == PROJECT and fallback is None:
                    fallback = frame
            frame = frame.f_back
        chosen = site or fallback
        index = (self._site(chosen.f_code.co_filename, chosen.f_lineno, chosen.f_code.co_name) if chosen
                 else self._site("<unknown>", 0, "?"))
        return index, (-1 if inner is None else self._module(inner, root))

    def _module(self, module: torch.nn.Module, root: torch.nn.Module) -> int:
        hit = self.module_index.get(id(module))
        if hit is not None and hit[0]() is module:
            return hit[1]
        names = self.names.get(id(root))
        if names is None or names[0]() is not root:
            by_name = dict(root.named_modules())
            names = self.names[id(root)] = (weakref.ref(root), {id(m): q for q, m in by_name.items()}, by_name)
        qualname = names[1].get(id(module))
        if qualname is None:  # called, but not a submodule of the outermost module being called
            chain = [(f"<{type(module).__name__}>", module)]
        else:  # the module, then its ancestors up to the root
            parts = qualname.split(".") if qualname else []
            chain = [(".".join(parts[:i]), names[2][".".join(parts[:i])]) for i in range(len(parts), -1, -1)]
        cls = type(module)
        self.trace.modules.append({"qualname": qualname, "class": cls.__name__, "source": _source_of(cls),
                                   "hooks": _hooks(chain)})
        self.module_index[id(module)] = (weakref.ref(module), len(self.trace.modules) - 1)
        return len(self.trace.modules) - 1

    # -- operations: TorchFunctionMode ------------------------------------------------

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = _op_name(func)
        if not self.active or self.busy or self.collecting or name is None:
            return func(*args, **kwargs)
        if name.endswith(".__get__"):  # a property: record it only if it gives a tensor
            out = func(*args, **kwargs)
            if not isinstance(out, torch.Tensor):
                return out
            return self._record(func, name, args, kwargs, out)
        return self._record(func, name, args, kwargs)

    def _record(self, func, name, args, kwargs, *given):
        """Record the call (``given``: its result, when already called: a getter changes nothing)."""
        self.busy = True
        try:
            site, module = self._where(sys._getframe(2))
            named = [(None, leaf) for leaf in _leaves(args)] + [(k, leaf) for k, v in kwargs.items()
                                                                for leaf in _leaves(v)]
            inputs, sources, unset = [], [], []
            for position, (key, leaf) in enumerate(named):
                source = None
                if isinstance(leaf, torch.Tensor):
                    source = self._source(leaf)
                    if source is None:
                        source = self._enter(leaf, f"operand of {name}", site, module)
                    if self._uninitialised(leaf):  # digested after the call, unless it is being written
                        unset.append(position)
                inputs.append(None if unset and unset[-1] == position else value_digest(leaf))
                sources.append(source)
        finally:
            self.busy = False
        out = given[0] if given else func(*args, **kwargs)
        if not self.active:
            return out
        self.busy = True
        try:
            results = [args[0]] if _in_place(name) and args else _leaves(out)
            tensors = [v for v in results if isinstance(v, torch.Tensor)]
            if name in ALLOCATIONS:
                written = {_storage(v) for v in tensors} - {None}
            else:  # what the call wrote into, or viewed, of memory not yet set
                written = ({_storage(named[p][1]) for p in unset} & {_storage(v) for v in tensors}) - {None}
            for p in unset:
                leaf = named[p][1]
                inputs[p] = _unset_digest(leaf) if _storage(leaf) in written else value_digest(leaf)
            for p, (key, _) in enumerate(named):
                if key is not None:
                    inputs[p] = f"{key}={inputs[p]}"
            if tensors or any(s is not None for s in sources):
                outputs = tuple(_unset_digest(v) if isinstance(v, torch.Tensor) and _storage(v) in written
                                else value_digest(v) for v in results)
                index = self._append(Event(OP, name, site, module, tuple(inputs), outputs, tuple(sources)))
                if index is not None:
                    for v in tensors:
                        self._produced(v, index)
                        if _storage(v) in written:
                            self._mark_unset(v)
        finally:
            self.busy = False
        return out

    def _mark_unset(self, t: torch.Tensor) -> None:
        try:
            ref = StorageWeakRef(t.untyped_storage())
        except Exception:  # no storage (meta, sparse, nested): nothing to leave unset
            return
        self.unset[ref.cdata] = ref

    def _uninitialised(self, t: torch.Tensor) -> bool:
        try:
            key = t.untyped_storage()._cdata
        except Exception:  # no storage: never fail the code under test
            return False
        ref = self.unset.get(key)
        if ref is not None and ref.expired():
            del self.unset[key]  # that storage is gone; another may take its place
            return False
        return ref is not None

    # -- entries: a line tracer over the code under test --------------------------------

    def _scan(self, values: dict, how: str, site: int, frame, containers=(tuple,)) -> None:
        """Enter the tensors among ``values`` that nothing recorded, and those inside
        ``containers`` (a tuple a helper returned). Dicts and lists a local names are
        state kept for later (a cache, a memo): what matters is where a value is taken
        out of them, which the next line's scan or an operation sees."""
        module = None
        for name, value in values.items():
            items = [value] if isinstance(value, torch.Tensor) else (
                _leaves(value)[:32] if isinstance(value, containers) else ())
            for item in items:
                if isinstance(item, torch.Tensor) and self._source(item) is None:
                    if module is None:
                        module = self._where(frame)[1]
                    label = f"{how} {name!r}" if item is value else f"an item of {how} {name!r}"
                    self._enter(item, label, site, module)

    def _locals(self, frame) -> dict:
        """The frame's own variables: not those of an enclosing function (state it keeps)."""
        values = frame.f_locals
        free = frame.f_code.co_freevars
        return {k: v for k, v in values.items() if k not in free} if free else values

    def _collection_starts(self, phase, info) -> None:  # first in gc.callbacks
        if phase == "start":
            self.collecting = True

    def _collection_ends(self, phase, info) -> None:  # last in gc.callbacks
        if phase == "stop":
            self.collecting = False

    def _on_call(self, frame, event, arg):
        if not self.active or self.collecting or code_category(frame.f_code.co_filename) == SKIP:
            return None
        self.busy = True
        try:
            back = frame.f_back
            code = frame.f_code
            if back is not None and code_category(back.f_code.co_filename) != SKIP:
                site = self._site(back.f_code.co_filename, back.f_lineno, back.f_code.co_name)
            else:
                site = self._site(code.co_filename, code.co_firstlineno, code.co_name)
            self._scan(self._locals(frame), "argument", site, frame)
            self.last_line[id(frame)] = frame.f_lineno
        finally:
            self.busy = False
        return self._on_line

    def _on_line(self, frame, event, arg):
        if not self.active:
            return None
        if event not in ("line", "return"):
            return self._on_line
        self.busy = True
        try:
            code = frame.f_code
            line = self.last_line.get(id(frame), frame.f_lineno)
            self._scan(self._locals(frame), "local", self._site(code.co_filename, line, code.co_name), frame)
            if event == "line":
                self.last_line[id(frame)] = frame.f_lineno
            else:
                site = self._site(code.co_filename, frame.f_lineno, code.co_name)
                self._scan({code.co_name: arg}, "the value returned by", site, frame, (tuple, list, dict))
                self.last_line.pop(id(frame), None)
        finally:
            self.busy = False
        return self._on_line

    def result(self, value, fn) -> None:
        """The last event: what ``fn`` returned."""
        if not self.active:
            return
        code = _code_of(fn)
        site = (self._site(code.co_filename, code.co_firstlineno, code.co_name) if code
                else self._site("<result>", 0, getattr(fn, "__qualname__", type(fn).__name__)))
        self.busy = True
        try:
            leaves = _leaves(value)
            for leaf in leaves:
                if isinstance(leaf, torch.Tensor) and self._source(leaf) is None:
                    self._enter(leaf, "result", site, -1)
            self._append(Event(RESULT, "result", site, -1, tuple(value_digest(v) for v in leaves), (),
                               tuple(self._source(v) if isinstance(v, torch.Tensor) else None for v in leaves)))
        finally:
            self.busy = False


_NAMES: dict = {}


def _op_name(func) -> str | None:
    """'torch.Tensor.add', or None for a function that only reads or sets metadata.
    (A property's getter, '.__get__', is recorded only when it gives a tensor: ``.T`` is
    an operation, ``.shape`` is not.)"""
    try:
        return _NAMES[func]
    except KeyError:
        pass
    except TypeError:  # unhashable
        return resolve_name(func) or repr(func)
    name = resolve_name(func) or getattr(func, "__qualname__", None) or repr(func)
    last = name.rsplit(".", 1)[-1]
    metadata = name.endswith((".__set__", ".__delete__")) or (name.startswith("torch.Tensor.") and last in METADATA)
    _NAMES[func] = None if metadata else name
    return _NAMES[func]


def _in_place(name: str) -> bool:
    last = name.rsplit(".", 1)[-1]
    return last in IN_PLACE_DUNDERS or (last.endswith("_") and not last.startswith("_"))


def _code_of(fn):
    """The code object a call to ``fn`` runs first, through partials, wrappers and modules."""
    for _ in range(8):
        if isinstance(fn, torch.nn.Module):
            fn = type(fn).forward
        elif hasattr(fn, "__wrapped__"):
            fn = fn.__wrapped__
        elif isinstance(fn, functools.partial):
            fn = fn.func
        else:
            break
    fn = getattr(fn, "__func__", fn)
    return getattr(fn, "__code__", None)


@contextmanager
def _recording(max_ops: int):
    if max_ops < 1:
        raise ValueError(f"max_ops must be >= 1, not {max_ops}")
    recorder = _Recorder(Trace(max_ops))
    previous = sys.gettrace()
    gc.callbacks.insert(0, recorder._collection_starts)  # around every other callback
    gc.callbacks.append(recorder._collection_ends)
    try:
        with recorder:
            recorder.active = True
            sys.settrace(recorder._on_call)
            try:
                yield recorder
            finally:
                sys.settrace(previous)
                recorder.active = False
    finally:
        gc.callbacks.remove(recorder._collection_starts)
        gc.callbacks.remove(recorder._collection_ends)


@contextmanager
def recording(max_ops: int = MAX_OPS):
    """Record the tensor operations and entries of the block into the Trace it yields."""
    with _recording(max_ops) as recorder:
        yield recorder.trace


def record(fn, *args, **kwargs):
    """Run ``fn(*args, **kwargs)`` once; return (its result, the Trace of the run)."""
    with _recording(MAX_OPS) as recorder:
        result = fn(*args, **kwargs)
        recorder.result(result, fn)
    return result, recorder.trace


# --- where the runs part -------------------------------------------------------------

@dataclass
class Divergence:
    """The first place two traces part, named in the run ``run`` (a or b)."""

    index: int  # the event's position in the trace of run ``run``
    kind: str  # FLOW, ARGUMENT or STATE
    run: str
    path: str
    line: int
    function: str
    op: str  # the operation there, or how a tensor entered ("entry: local 'kv'")
    message: str
    module: dict | None  # {qualname, class, source}
    hooks: list
    other: dict | None  # the other run's event there {path, line, function, op, index}; None if it had ended

    def format(self) -> str:
        """'path:line: message', one line."""
        text = f"{self.path}:{self.line}: {self.message}"
        if self.module is not None:
            qualname = self.module["qualname"]
            name = "a module outside the outermost one called" if qualname is None else qualname or "the root module"
            text += f" [module {name}: {self.module['class']} ({self.module['source']})"
            text += f"; hooks: {'; '.join(self.hooks)}]" if self.hooks else "]"
        return text

    def to_json(self) -> dict:
        return {"path": self.path, "line": self.line, "function": self.function, "message": self.message,
                "op": self.op, "index": self.index, "kind": self.kind, "run": self.run, "module": self.module,
                "hooks": list(self.hooks), "other": self.other}

    @classmethod
    def from_json(cls, data: dict) -> "Divergence":
        return cls(**{key: data[key] for key in ("index", "kind", "run", "path", "line", "function", "op",
                                                  "message", "module", "hooks", "other")})


def _what(event: Event) -> str:
    return f"entry: {event.name}" if event.kind == ENTRY else event.name


def _doing(event: Event) -> str:
    if event.kind == ENTRY:
        return f"took in a tensor ({event.name})"
    return "returned its result" if event.kind == RESULT else f"ran {event.name}"


def _place(trace: Trace, event: Event) -> str:
    path, line, function = trace.sites[event.site]
    return f"{path}:{line} ({function})"


def _described_source(trace: Trace, event: Event, k: int) -> str:
    source = event.sources[k] if k < len(event.sources) else None
    if source is None:
        return "a Python value, not a tensor"
    if source == -1:
        return "a parameter"
    producer = trace.events[source]
    return f"a tensor from {_what(producer)} at {_place(trace, producer)}, changed since outside the traced operations"


def first_divergence(trace_a: Trace, trace_b: Trace) -> Divergence | None:
    """The first event where the runs part (see the module's docstring), or None where
    they agree (as far as a truncated trace goes)."""
    runs = ((trace_a, trace_a.label or "a"), (trace_b, trace_b.label or "b"))
    events_a, events_b = trace_a.events, trace_b.events
    i = j = 0
    while i < len(events_a) and j < len(events_b):
        a, b = events_a[i], events_b[j]
        if _step(trace_a, a) != _step(trace_b, b):
            # A value taken in on one side that the other side computes, the same, is a
            # cache that did its job (a hit in one run, a miss in the other): pass over it.
            if b.kind == ENTRY and (resume := _caught_up(trace_a, i, trace_b, j)) is not None:
                i, j = resume, j + 1
                continue
            if a.kind == ENTRY and (resume := _caught_up(trace_b, j, trace_a, i)) is not None:
                i, j = i + 1, resume
                continue
            return _parted((i, j), runs, a, b)
        if a.inputs != b.inputs:
            return _argument((i, j), runs, a, b)
        if a.outputs != b.outputs:
            if b.kind == ENTRY:
                message = (f"a tensor no traced operation computed enters here ({b.name}) with other values in "
                           f"run {runs[1][1]} than in run {runs[0][1]}: it was stored outside the traced tensor flow")
            else:
                message = (f"{b.name} computed different results from the same arguments: state its arguments "
                           f"do not show (a random generator, a global setting, memory written outside torch)")
            return _divergence((i, j), STATE, runs, 1, (a, b), message)
        i, j = i + 1, j + 1
    if (i == len(events_a) and j == len(events_b)) or (i == len(events_a) and trace_a.truncated) or (
            j == len(events_b) and trace_b.truncated):
        return None
    return _parted((i, j), runs, events_a[i] if i < len(events_a) else None,
                   events_b[j] if j < len(events_b) else None)


def _step(trace: Trace, event: Event) -> tuple:
    """What must be the same for two events to be the same step: kind, operation, place."""
    return event.kind, event.name, trace.sites[event.site]


def _caught_up(other: Trace, start: int, entering: Trace, at: int) -> int | None:
    """Where ``other`` is back in step with ``entering`` after the tensor that entered
    ``entering`` at event ``at``, if ``other`` holds the same value, bitwise: either it
    had it already (taken in or computed before ``start``: a constant first read on
    another path) and its event ``start`` is the one after the entry; or it computes or
    takes it in within CATCH_UP events, and the event after that is the one after the
    entry (or that is another entry, handled in turn). None if neither."""
    value = entering.events[at].outputs[0]
    if value.endswith((":unset", "(0)")) or ":opaque" in value:
        return None
    following = entering.events[at + 1] if at + 1 < len(entering.events) else None
    events = other.events

    def resumes(k: int) -> bool:  # is other's event k the step after the entry?
        if following is None or following.kind == ENTRY:
            return True
        return k < len(events) and _step(other, events[k]) == _step(entering, following)

    if resumes(start) and any(value in e.outputs for e in events[:start]):
        return start
    for k in range(start, min(len(events), start + CATCH_UP)):
        if events[k].kind != RESULT and value in events[k].outputs and resumes(k + 1):
            return k + 1
    return None


def _argument(at: tuple, runs, a: Event, b: Event) -> Divergence:
    """Event ``at`` got different arguments although every earlier event agreed."""
    (_, label_a), (trace_b, label_b) = runs
    differing = [k for k, (x, y) in enumerate(zip(a.inputs, b.inputs)) if x != y]
    k = differing[0] if differing else min(len(a.inputs), len(b.inputs))
    # Plain values are shown as they are (a tensor's digest, a hash, says nothing to a reader).
    shown = k < min(len(a.inputs), len(b.inputs)) and ":" not in a.inputs[k] + b.inputs[k]
    values = f" ({a.inputs[k]} in run {label_a}, {b.inputs[k]} in run {label_b})" if shown else ""
    what = f"the result differs at item {k}" if b.kind == RESULT else f"{b.name} got a different argument {k}"
    message = f"{what}, though every earlier event agreed: {_described_source(trace_b, b, k)}{values}"
    return _divergence(at, ARGUMENT, runs, 1, (a, b), message)


def _parted(at: tuple, runs, a: Event | None, b: Event | None) -> Divergence:
    """The control flow parted at events ``at`` (a's, b's): name the side where a tensor
    entered if only one did, else the suspect run (b) unless it had no event."""
    side = 0 if b is None or (a is not None and a.kind == ENTRY and b.kind != ENTRY) else 1
    (there_trace, there_label), there_event = runs[1 - side], (a, b)[1 - side]
    label, event = runs[side][1], (a, b)[side]
    instead = (f"run {there_label} {_doing(there_event)} at {_place(there_trace, there_event)} instead"
               if there_event is not None else f"run {there_label} had ended")
    if event.kind == ENTRY:
        message = f"a tensor no traced operation computed enters here ({event.name}) in run {label}; {instead}"
    elif event.kind == RESULT:
        message = f"run {label} returned its result here; {instead}"
    else:
        message = f"the runs part here: run {label} ran {event.name}; {instead}"
    return _divergence(at, FLOW, runs, side, (a, b), message)


def _divergence(at: tuple, kind: str, runs, side: int, events: tuple, message: str) -> Divergence:
    """The Divergence naming ``events[side]`` in ``runs[side]`` (0: a, 1: b); ``at`` holds
    the positions of ``events`` in their traces."""
    (trace, label), event = runs[side], events[side]
    other_trace, other_event = runs[1 - side][0], events[1 - side]
    path, line, function = trace.sites[event.site]
    module = trace.modules[event.module] if event.module >= 0 else None
    other = None
    if other_event is not None:
        o_path, o_line, o_function = other_trace.sites[other_event.site]
        other = {"path": o_path, "line": o_line, "function": o_function, "op": _what(other_event),
                 "index": at[1 - side]}
    return Divergence(index=at[side], kind=kind, run=label, path=path, line=line, function=function,
                      op=_what(event), message=message,
                      module=None if module is None else {k: module[k] for k in ("qualname", "class", "source")},
                      hooks=list(module["hooks"]) if module else [], other=other)
