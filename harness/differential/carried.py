"""Which state an earlier request left that a later one met, where it was left and where it was
read: the sites of a finding on the carried-state axis, where no address or id is compared and
the sanitizer has nothing to see.

One job of the check's never-reuse warm process (``repro.warm``), ``main([JOB.json, OUT.json])``,
for the first request that differs served after the ones before it from served alone:

1. *What differs.* The state every imported module reaches (its globals; the attributes of the
   classes it defines; what those hold, through dicts, lists, tuples, sets and objects' fields,
   ``MAX_DEPTH`` deep) is read at the start of the request in a fork that serves it alone, and
   again after the earlier requests. Modules imported by one side only are left out (a lazy
   import is no state carried), and so is this tool.
2. *What mattered.* Each difference that can be set back to what the fresh process had (an
   entry or attribute the fresh process lacks is removed, a list cut to its length, a plain
   value, a dtype or a tensor's values written back) is a candidate. In forks of the served
   process the request runs with candidates set back, split as delta debugging splits them (by
   container first, then within), until the smallest set is found with which the request gives,
   bitwise, its result served alone. That set, and nothing else, is what is named: a
   difference the request never looked at is not.
3. *Where.* The earlier requests are served again under :class:`Watch`: where the state took
   the value the request met is where it was *left*; then the request runs, and its first
   lookup or read of the state is where it was *read*.

A request whose result does not depend on any state reached this way (a C extension's memory, a
closure's cell, a random generator's position) gets no site: the result says why.
"""

from __future__ import annotations

import ast
import collections
import dis
import enum
import functools
import gc
import json
import os
import pickle
import re
import select
import signal
import sys
import time
import types
import warnings
from pathlib import Path

import torch

from harness.differential.localise import EXACT_BYTES, SKIP, code_category, tensor_digest

MAX_DEPTH = 6  # steps from a module's global to the state read
MAX_ITEMS = 200  # entries read of one container
MAX_TRIALS = 40  # runs of the request with state set back
MAX_KEPT_BYTES = 64 << 20  # the fresh process's tensors kept to set one back, at most
_HEX = re.compile(r"0x[0-9a-fA-F]+")
_PLAIN = (type(None), bool, int, float, complex, str, bytes)
_SKIPPED = set(sys.stdlib_module_names) | {"harness"}  # not the code under test's state
_LEN = ("len",)  # the step naming a list's length
_CACHE = ("cache",)  # the step from a functools cache (lru_cache, cache) to its dict of results
_LEAVES = (torch.dtype, torch.device, enum.Enum)  # values that are no state of their own: shown whole
# where the search does not look: said when it names nothing
_UNREAD = ("a closure, a function's defaults, a bounded lru_cache, a C extension or torch's own settings")
_CODE = (types.ModuleType, types.FunctionType, types.BuiltinFunctionType, types.MethodType, type,
         types.MethodWrapperType, types.WrapperDescriptorType, types.MethodDescriptorType)


# --- what state there is ---------------------------------------------------------------

def _shown(value) -> str:
    """A value as both processes can compare it: no address in it."""
    return _HEX.sub("0x?", repr(value)[:160])


def _keys_shown(mapping: dict) -> list[tuple[str, object, object]]:
    """(shown key, key, value) of a dict's own entries (``dict.items``: a subclass that loads its entries
    on demand is not made to), a key of another kind than a plain value shown by its type and its
    place among the keys of that type: its repr is the program's code, and may cost or print."""
    shown, count = [], {}
    for key, value in list(dict.items(mapping))[:MAX_ITEMS]:
        if isinstance(key, _PLAIN) or (isinstance(key, tuple) and all(isinstance(k, _PLAIN) for k in key)):
            shown.append((_shown(key), key, value))
        else:
            kind = type(key).__qualname__
            count[kind] = count.get(kind, 0) + 1
            shown.append((f"<a {kind} #{count[kind]}>", key, value))
    return shown


def _tensor_shown(t: torch.Tensor) -> str:
    """Its values' digest where it is small; else its dtype, shape and version (a change in place
    bumps it), not to read a model's weights at every look."""
    if t.device.type == "cpu" and t.numel() * t.element_size() <= EXACT_BYTES:
        return tensor_digest(t)
    try:
        return f"{str(t.dtype).removeprefix('torch.')}{tuple(t.shape)} version {t._version}"
    except Exception:  # noqa: BLE001 - a tensor with no version or storage
        return f"{type(t).__name__} {t.dtype}"


def _cache_of(wrapper) -> dict | None:
    """The dict of results (by the key of the call's arguments) of a functools cache with no bound;
    None for a bounded one, whose results C keeps where nothing in Python reaches them."""
    if wrapper.cache_parameters().get("maxsize") is not None:
        return None
    own = getattr(wrapper, "__dict__", None)
    held = [r for r in gc.get_referents(wrapper) if type(r) is dict and r is not own]
    return held[0] if len(held) == 1 else None


def _cached(held):
    """The functools cache a class attribute is, or wraps as a static or class method; else None."""
    held = held.__func__ if isinstance(held, (staticmethod, classmethod)) else held
    return held if isinstance(held, functools._lru_cache_wrapper) else None


def snapshot(within: list[tuple] | None = None) -> dict[tuple, str]:
    """Path (a tuple of steps) -> the value there as a string, for all the state imported modules
    reach (see the module's docstring), or only from the paths ``within``. A step is
    ``("module", name)``, ``("attr", name)``, ``("key", shown key)``, ``("index", i)`` or ``_LEN``."""
    found: dict[tuple, str] = {}
    seen: set[int] = set()

    def visit(path: tuple, obj, depth: int) -> None:
        if isinstance(obj, _LEAVES):  # before the plain values: an IntEnum is an int
            found[path] = f"leaf {obj!r}"
        elif isinstance(obj, _PLAIN):
            found[path] = _shown(obj)
        elif isinstance(obj, torch.Tensor):
            found[path] = f"tensor {_tensor_shown(obj)}"
        elif isinstance(obj, _CODE):  # the code itself, not state it keeps: left out, as most globals are code
            return
        elif id(obj) in seen or depth >= MAX_DEPTH:
            found[path] = type(obj).__qualname__
        else:
            seen.add(id(obj))
            if isinstance(obj, torch.nn.Module):  # a model is a root of state as a global is: its
                depth = 0                         # submodules' hooks lie deeper than any global's
            if isinstance(obj, functools._lru_cache_wrapper):
                found[path] = "functools cache"
                results = _cache_of(obj)
                if results is not None:
                    visit((*path, _CACHE), results, depth + 1)
            elif isinstance(obj, dict):
                found[path] = f"dict of {dict.__len__(obj)}"
                for shown, _, value in _keys_shown(obj):
                    visit((*path, ("key", shown)), value, depth + 1)
            elif isinstance(obj, (list, tuple)):
                items = list.__iter__(obj) if isinstance(obj, list) else tuple.__iter__(obj)
                found[path] = "list" if isinstance(obj, list) else "tuple"
                found[(*path, _LEN)] = str(len(obj))
                for i, value in zip(range(MAX_ITEMS), items):
                    visit((*path, ("index", i)), value, depth + 1)
            elif isinstance(obj, (set, frozenset)):
                found[path] = f"{type(obj).__qualname__} {sorted(_shown(v) for v in list(obj)[:MAX_ITEMS])}"
            else:
                found[path] = type(obj).__qualname__
                try:
                    fields = object.__getattribute__(obj, "__dict__")
                except Exception:  # noqa: BLE001 - no __dict__, or a proxy's own
                    fields = None
                if isinstance(fields, dict):
                    for key, value in list(fields.items())[:MAX_ITEMS]:
                        visit((*path, ("attr", key)), value, depth + 1)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a deprecated global warns when read
        for path in within or ():
            try:
                visit(path, _resolve(path), len(path) - 2)
            except (KeyError, IndexError, TypeError):
                pass
        for module_name, module in list(sys.modules.items()) if within is None else ():
            if module is None or module_name.partition(".")[0] in _SKIPPED or module_name.startswith("_"):
                continue
            root = (("module", module_name),)
            for name, value in list(vars(module).items()):
                if name.startswith("__"):
                    continue
                if isinstance(value, type) and value.__dict__.get("__module__") == module_name:
                    for attribute, held in list(vars(value).items()):
                        if attribute.startswith("__"):
                            continue
                        held = _cached(held) or held  # a cache is state, the one kind of method that is
                        if isinstance(held, functools._lru_cache_wrapper) or not callable(held) and not isinstance(
                                held, (property, staticmethod, classmethod, types.MemberDescriptorType,
                                       types.GetSetDescriptorType)):
                            visit((*root, ("attr", name), ("attr", attribute)), held, 1)
                else:
                    visit((*root, ("attr", name)), value, 0)
    return found


_MEMBERS = ("_parameters", "_buffers", "_modules")  # an nn.Module's members, read as its attributes


def _as_written(path: tuple) -> list[tuple]:
    """The steps as code writes them: ``model._parameters['weight']`` is ``model.weight``."""
    steps = []
    for step in path:
        if step[0] == "key" and steps and steps[-1][0] == "attr" and steps[-1][1] in _MEMBERS:
            name = _literal(step[1])
            name = name if isinstance(name, str) else step[1]
            # a ModuleList's or Sequential's member is indexed: ``blocks[0]``
            steps[-1] = ("attr", name) if name.isidentifier() else ("index", name)
        else:
            steps.append(step)
    return steps


def expression(path: tuple) -> str:
    """A path as Python would write it: ``pkg.mod.Class.attr[(0, 0)]``."""
    text, steps = "", _as_written(path)
    for i, (kind, *rest) in enumerate(steps):
        value = rest[0] if rest else None
        if kind == "key" and i and steps[i - 1] == _CACHE:  # a cached result: the call that gave it
            text += value if value.startswith("(") else f"({value})"
            continue
        text += {"module": f"{value}", "attr": f".{value}", "key": f"[{value}]", "index": f"[{value}]",
                 "len": ".__len__()", "cache": ""}[kind]
    return text


# --- what can be set back ------------------------------------------------------------

def _resolve(path: tuple, keys: dict | None = None):
    """The object at ``path`` in this process (KeyError where there is none). ``keys``: a key
    step's path -> the key object, filled and then used instead of searching the dict (for a
    caller that resolves the same paths again and again)."""
    obj = sys.modules[path[0][1]]
    for i in range(1, len(path)):
        kind, *rest = path[i]
        if kind == "len":
            return len(obj)
        if kind == "cache":
            obj = _cache_of(obj)
            if obj is None:
                raise KeyError("a bounded cache")
        elif kind == "attr":
            fields = getattr(obj, "__dict__", None)
            if not isinstance(fields, (dict, types.MappingProxyType)) or rest[0] not in fields:
                raise KeyError(rest[0])
            obj = fields[rest[0]]
            if isinstance(fields, types.MappingProxyType):  # a class's: a cached static method is its cache
                obj = _cached(obj) or obj
        elif kind == "key" and keys is None:
            obj = _entry(obj, rest[0])[1]
        elif kind == "key":
            key = keys.get(path[:i + 1])
            if key is None:
                key = keys[path[:i + 1]] = _entry(obj, rest[0])[0]
            if key not in obj:
                raise KeyError(rest[0])
            obj = obj[key]
        else:
            obj = obj[rest[0]]
    return obj


def _entry(mapping: dict, shown: str) -> tuple:
    """The (key, value) of ``mapping`` whose key is shown as ``shown`` (KeyError if none)."""
    for text, key, value in _keys_shown(mapping):
        if text == shown:
            return key, value
    raise KeyError(shown)


def candidates(alone: dict, after: dict, kept: dict | None = None) -> list[dict]:
    """The differences between the fresh process's state (``alone``) and the served one's
    (``after``) that can be set back: ``{"path", "how", "alone", "after"}``, outermost only (an
    entry the fresh process lacks, not also everything in it). ``kept``: the fresh process's
    tensors and leaves by path (:func:`_fresh_values`), to set one back that differs."""
    modules = {p[0] for p in alone} & {p[0] for p in after}
    found: list[dict] = []
    for path in sorted(after, key=len):
        if path[0] not in modules or alone.get(path) == after[path]:
            continue
        if any(path[:len(c["path"])] == c["path"] for c in found):
            continue
        parent, last = path[:-1], path[-1]
        if after.get(parent) == "tuple":  # a tuple's items cannot be written
            continue
        if last == _LEN and path in alone and parent in alone and alone[parent] == after[parent] == "list":
            if int(after[path]) > int(alone[path]):
                found.append({"path": path, "how": "cut", "alone": alone[path], "after": after[path]})
        elif path not in alone and parent in alone and last[0] in ("key", "attr") and len(parent) > 1:
            found.append({"path": path, "how": "remove", "alone": None, "after": after[path]})
        elif path in alone and last != _LEN and _literal(alone[path]) is not _NOT_LITERAL:
            found.append({"path": path, "how": "write", "alone": alone[path], "after": after[path]})
        elif path in (kept or {}) and after[path].startswith(("tensor ", "leaf ")):
            found.append({"path": path, "how": "values", "alone": alone[path], "after": after[path],
                          "value": kept[path]})
    return found


_NOT_LITERAL = object()


def _literal(shown: str):
    try:
        return ast.literal_eval(shown)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return _NOT_LITERAL


def set_back(candidate: dict) -> None:
    """Set the state at ``candidate["path"]`` back to what the fresh process had."""
    path, how = candidate["path"], candidate["how"]
    if how == "values":  # a tensor in place where it fits: whatever else holds it sees it set back too
        now, fresh = _resolve(path), candidate["value"]
        if not isinstance(fresh, torch.Tensor):
            _rebind(path, fresh)
        elif isinstance(now, torch.Tensor) and (now.shape, now.dtype, now.device) == (fresh.shape, fresh.dtype,
                                                                                    fresh.device):
            with torch.no_grad():
                now.copy_(fresh)
        else:
            _rebind(path, fresh.clone())
        return
    if how == "cut":
        del _resolve(path[:-1])[int(candidate["alone"]):]
        return
    if how == "write":
        _rebind(path, _literal(candidate["alone"]))
        return
    holder, (kind, value) = _resolve(path[:-1]), path[-1]  # remove: an attribute or an entry
    if kind == "attr":
        delattr(holder, value)
    else:
        del holder[_entry(holder, value)[0]]


# --- running the request in forks ----------------------------------------------------

class Fork:
    """``fn(*args)`` running in a fork of this process; :meth:`result` waits for it. The result
    comes back through a pipe: a fork killed with its process group leaves no file behind."""

    def __init__(self, fn, *args):
        self.reading, writing = os.pipe()
        self.pid = os.fork()
        if self.pid == 0:  # the fork: never returns
            os.close(self.reading)
            code = 0
            try:
                result = ("ok", fn(*args))
            except BaseException as exc:  # noqa: BLE001 - reported to the parent
                result, code = ("error", f"{type(exc).__name__}: {exc}"), 1
            try:
                with os.fdopen(writing, "wb") as out:
                    out.write(pickle.dumps(result))
            finally:
                os._exit(code)
        os.close(writing)

    def result(self, timeout: float):
        """``("ok", its return value)``, or ``("error", why)`` where it raised, died or ran past
        ``timeout`` seconds from now (then it is killed)."""
        deadline, chunks = time.monotonic() + timeout, []
        try:
            while True:
                left = deadline - time.monotonic()
                if left <= 0 or not select.select([self.reading], [], [], left)[0]:
                    os.kill(self.pid, signal.SIGKILL)
                    return "error", f"it did not finish in {timeout:.0f}s"
                chunk = os.read(self.reading, 1 << 20)
                if not chunk:
                    break
                chunks.append(chunk)
        finally:
            os.close(self.reading)
            os.waitpid(self.pid, 0)
        try:
            return pickle.loads(b"".join(chunks))
        except (pickle.UnpicklingError, EOFError):  # nothing, or cut short: it died on the way
            return "error", "the fork died"


def in_fork(fn, *args, timeout: float = 600):
    """``fn(*args)`` in a fork of this process, waited for: :meth:`Fork.result`."""
    return Fork(fn, *args).result(timeout)


def _outputs(fn, request) -> dict:
    from repro.callable import as_outputs
    _, _, prompt, rseed = request
    return {name: t.clone() for name, t in as_outputs(fn(prompt, rseed)).items()}


def _same(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def _agrees(fn, request, reference: dict, chosen: list[dict], timeout: float) -> bool:
    """Does the request, with ``chosen`` set back, give ``reference`` (in a fork)?"""
    def trial():
        for candidate in chosen:
            try:
                set_back(candidate)
            except Exception:  # noqa: BLE001 - a state that cannot be set back is left as it is
                pass
        return _outputs(fn, request)
    status, value = in_fork(trial, timeout=timeout)
    return status == "ok" and _same(value, reference)


def smallest(found: list[dict], agrees) -> tuple[list[dict], int]:
    """The smallest subset of ``found`` with which ``agrees(subset)`` holds, by delta debugging
    (Zeller's ddmin: halves, then finer parts and their complements), given that all of
    ``found`` does; and the number of trials run."""
    trials, parts = 0, 2
    while len(found) > 1 and trials < MAX_TRIALS:
        size = -(-len(found) // parts)
        chunks = [found[i:i + size] for i in range(0, len(found), size)]
        complements = [[c for c in found if c not in chunk] for chunk in chunks] if len(chunks) > 2 else []
        for subset in (*chunks, *complements):
            trials += 1
            if agrees(subset):
                found, parts = subset, 2 if len(subset) == size else max(parts - 1, 2)
                break
        else:
            if parts >= len(found):
                break
            parts = min(len(found), parts * 2)
    return found, trials


def narrowed(found: list[dict], agrees) -> tuple[list[dict], int, bool]:
    """:func:`smallest` in two steps: over the containers the differences are in (the entries of
    one dict, the fields of one object: a profiling dict of a thousand entries is one step), then
    within each container kept; and whether each step ran to its end (not stopped by MAX_TRIALS)."""
    by_holder: dict[tuple, list] = {}
    for candidate in found:
        by_holder.setdefault(candidate["path"][:-1], []).append(candidate)
    holders, trials = smallest(list(by_holder.values()), lambda held: agrees([c for h in held for c in h]))
    complete, picked = trials < MAX_TRIALS, []
    for i, held in enumerate(holders):
        rest = [c for h in holders[i + 1:] for c in h]
        if len(held) > 1:
            held, more = smallest(held, lambda subset: agrees(picked + subset + rest))
            trials, complete = trials + more, complete and more < MAX_TRIALS
        picked += held
    return picked, trials, complete


# --- where it was left and read ------------------------------------------------------

def _names_by_line(code) -> dict[int, set[tuple[str, str]]]:
    """Line -> the names the line loads: ``("global", name)`` or ``("attr", name)``."""
    lines: dict[int, set] = {}
    for instruction in dis.get_instructions(code):
        kind = {"LOAD_GLOBAL": "global", "LOAD_NAME": "global", "LOAD_ATTR": "attr",
                "LOAD_METHOD": "attr"}.get(instruction.opname)
        if kind and instruction.positions and instruction.positions.lineno:
            lines.setdefault(instruction.positions.lineno, set()).add((kind, instruction.argval))
    return lines


def _watched_name(path: tuple) -> tuple[str, bool]:
    """The last attribute or global on the path, what the code that reads or writes it names, and
    whether that is the global of the path's module (``mod.CACHE[key]``, ``mod._built(args)``)."""
    steps = _as_written(path)
    at = max(i for i, (kind, *_) in enumerate(steps) if kind == "attr")
    return steps[at][1], at == 1


def _watching_dict(holder: dict, on_read) -> dict:
    """A copy of ``holder`` (a dict, defaultdict or OrderedDict) whose lookups (``[]``, ``in``,
    ``get``, ``setdefault``, ``pop``) first call ``on_read(key, frame)`` with the frame that looked
    up."""
    base = type(holder)

    class Watched(base):
        def __getitem__(self, key):
            on_read(key, sys._getframe(1))
            return base.__getitem__(self, key)

        def __contains__(self, key):
            on_read(key, sys._getframe(1))
            return base.__contains__(self, key)

        def get(self, key, *default):
            on_read(key, sys._getframe(1))
            return base.get(self, key, *default)

        def setdefault(self, key, *default):
            on_read(key, sys._getframe(1))
            return base.setdefault(self, key, *default)

        def pop(self, key, *default):
            on_read(key, sys._getframe(1))
            return base.pop(self, key, *default)
    copy = Watched(holder.default_factory) if base is collections.defaultdict else Watched()
    base.update(copy, holder)
    return copy


def _watching_attribute(holder, name: str, on_read):
    """Make ``holder`` (an instance of an ordinary class) call ``on_read(frame)`` whenever its
    attribute ``name`` is read, by giving it a subclass of its class; the class to put back, or
    None where that cannot be done (a module, a class, a built-in type, slots)."""
    base = type(holder)
    if isinstance(holder, (types.ModuleType, type)) or not hasattr(holder, "__dict__"):
        return None

    def __getattribute__(self, attribute):
        if attribute == name:
            on_read(sys._getframe(1))
        return base.__getattribute__(self, attribute)
    try:
        watched = type(base.__name__, (base,), {"__getattribute__": __getattribute__, "__slots__": ()})
        object.__setattr__(holder, "__class__", watched)
    except TypeError:
        return None
    return base


def _rebind(path: tuple, value) -> None:
    """Make the holder of ``path`` hold ``value`` there instead."""
    holder, (kind, *step) = _resolve(path[:-1]), path[-1]
    step = step[0] if step else None
    if kind in ("len", "cache"):
        raise TypeError(f"{expression(path)} cannot be replaced")
    if kind == "attr":
        setattr(holder, step, value)
    elif kind == "key":
        holder[_entry(holder, step)[0]] = value
    else:
        holder[step] = value


class Watch:
    """Where the watched states were left and where they are read, while it is on.

    *Left*: the state is looked at on every line of the frames whose code names an attribute or
    global on its path, and at every call anywhere (a change made through ``setattr``, or a helper that names
    nothing, shows at the next); a change is put on the line that was running (a frame's line
    includes what it called). *Read*, once :meth:`start_reading`: for an entry of a dict, the first
    lookup of its key (the dict is swapped for a copy that sees its lookups); for an attribute of an
    object, the first read of it on that object (the object is given a subclass that sees it); else
    the first line that names the global or attribute (``"by": "names it"``). A line in torch, the
    standard library or this tool is named where the code under test called it (``through``)."""

    def __init__(self, paths: list[tuple]):
        self.paths = paths
        # every attribute or global on the paths: a frame that names the holder may change the state
        self.names = {name for p in paths for kind, *rest in _as_written(p) if kind == "attr" for name in rest}
        self._key_objects: dict[tuple, object] = {}  # a key step's path -> the key object: no search of the dict
        self.values = {p: self._value(p) for p in paths}
        self.quick = {p: self._quick(p) for p in paths}
        self.left: dict[tuple, dict] = {}
        self.read: dict[tuple, dict] = {}
        self.request = None  # the label of the request being served
        self.reading = False
        self._lines: dict = {}  # code -> line -> names
        self._at: dict = {}  # watched frame -> the line it is running
        self._named: dict[tuple, dict] = {}  # path -> the first line that names it, while reading
        # path -> (the name that reads it, whether that is a global of the path's own module)
        self._reads_as = {p: _watched_name(p) for p in paths}
        self._undo: list = []  # what start_reading swapped, to put back

    def start_reading(self, request: str) -> None:
        self.request, self.reading = request, True
        for path in self.paths:
            try:
                holder = _resolve(path[:-1])
            except (KeyError, IndexError, TypeError):
                continue
            kind, step = path[-1][0], path[-1][1] if len(path[-1]) > 1 else None
            if kind == "key" and len(path) > 2 and path[-2] != _CACHE and type(holder) in (dict, collections.defaultdict,
                                                                    collections.OrderedDict):
                key = _entry(holder, step)[0]

                def on_key(looked_up, frame, path=path, key=key):
                    try:
                        same = type(looked_up) is type(key) and bool(looked_up == key)
                    except Exception:  # noqa: BLE001 - a key that compares oddly is not this one
                        same = False
                    if same:
                        self._first_read(path, frame)
                _rebind(path[:-1], _watching_dict(holder, on_key))
                self._undo.append(lambda path=path, holder=holder: _rebind(path[:-1], holder))
            elif kind == "attr":
                base = _watching_attribute(holder, step, lambda frame, path=path: self._first_read(path, frame))
                if base is not None:
                    self._undo.append(lambda holder=holder, base=base: object.__setattr__(holder, "__class__", base))

    def _first_read(self, path: tuple, frame) -> None:
        if frame.f_code.co_name in ("__getattr__", "__getattribute__") and frame.f_back is not None:
            frame = frame.f_back  # an attribute served from a dict (an nn.Module's members): who asked
        if path not in self.read and not frame.f_code.co_filename.startswith(_HARNESS):
            self.read[path] = self._where(frame, frame.f_lineno)

    def _value(self, path: tuple) -> str:
        try:
            value = _resolve(path, self._key_objects)
        except (KeyError, IndexError, TypeError, ValueError, StopIteration):
            return "<absent>"
        if isinstance(value, torch.Tensor):  # looked at on every line: not its bytes
            return f"tensor {id(value)} version {value._version}"
        return _shown(value)

    def _quick(self, path: tuple) -> tuple:
        """What changes when the state does, but for a container's item replaced in place: its
        identity, size and version (a look at every call, where :meth:`_value` would cost)."""
        try:
            value = _resolve(path, self._key_objects)
        except (KeyError, IndexError, TypeError, ValueError, StopIteration):
            return ("absent",)
        size = len(value) if isinstance(value, (dict, list, set, tuple, str)) else None
        return id(value), size, getattr(value, "_version", None) if isinstance(value, torch.Tensor) else None

    def _where(self, frame, line: int) -> dict:
        """``frame`` at ``line``, or where the code under test called it when the frame is torch's,
        the standard library's or this tool's (then ``through`` names the frame)."""
        asking = frame
        while asking is not None and code_category(asking.f_code.co_filename) == SKIP:
            asking = asking.f_back
        code = frame.f_code
        site = {"path": code.co_filename, "line": line, "function": code.co_name, "request": self.request}
        if asking is None or asking is frame:
            return site
        return {**site, "path": asking.f_code.co_filename, "line": asking.f_lineno,
                "function": asking.f_code.co_name, "through": f"{code.co_filename}:{line}"}

    def _check(self, frame, line: int, quick: bool = False) -> None:
        """Any change since the last look was made while ``frame`` ran ``line``; ``quick``: only
        where :meth:`_quick` sees it."""
        for path in self.paths:
            if quick:
                fingerprint = self._quick(path)
                if fingerprint == self.quick[path]:
                    continue
                self.quick[path] = fingerprint
            now = self._value(path)
            if now != self.values[path]:
                self.values[path] = now
                if not self.reading and frame is not None:
                    self.left[path] = self._where(frame, line)

    def _on_call(self, frame, event, arg):
        caller = frame.f_back
        if caller is not None and not caller.f_code.co_filename.startswith(_HARNESS):
            self._check(caller, self._at.get(caller, caller.f_lineno), quick=True)
        code = frame.f_code
        if not self.names & set(code.co_names) or code.co_filename.startswith(_HARNESS):
            return None
        if code not in self._lines:
            self._lines[code] = _names_by_line(code)
        return self._on_line

    def _on_line(self, frame, event, arg):
        if frame in self._at:
            self._check(frame, self._at[frame])
        if event == "return":
            self._at.pop(frame, None)
            return self._on_line
        self._at[frame] = frame.f_lineno
        if self.reading:
            loaded = self._lines[frame.f_code].get(frame.f_lineno, set())
            for path in self.paths:
                if path not in self._named and self._names_it(path, frame, loaded, *self._reads_as[path]):
                    self._named[path] = {**self._where(frame, frame.f_lineno), "by": "names it"}
        return self._on_line

    @staticmethod
    def _names_it(path: tuple, frame, loaded: set, name: str, module_global: bool) -> bool:
        if ("attr", name) in loaded:
            return True
        # a global of the state's own module, read by that module's code
        return module_global and ("global", name) in loaded and \
            frame.f_globals is vars(sys.modules.get(path[0][1], sys))

    def __enter__(self):
        sys.settrace(self._on_call)
        return self

    def __exit__(self, *exc):
        sys.settrace(None)
        for undo in reversed(self._undo):
            undo()
        for path, site in self._named.items():
            self.read.setdefault(path, site)


_HARNESS = str(Path(__file__).resolve().parents[1])


# --- the job ---------------------------------------------------------------------------

def _label(request) -> str:
    return f"seed {request[0]} request {request[1]}"


def _fresh_values(state: dict) -> dict:
    """What a value that differs is set back to, by path: copies of the CPU tensors (up to
    MAX_KEPT_BYTES in all), and the leaves (a dtype, a device, an enum member: the same objects in
    every fork)."""
    kept, size = {}, 0
    for path, shown in state.items():
        if not shown.startswith(("tensor ", "leaf ")):
            continue
        try:
            value = _resolve(path)
        except (KeyError, IndexError, TypeError):
            continue
        if isinstance(value, _LEAVES):
            kept[path] = value
        elif isinstance(value, torch.Tensor) and value.device.type == "cpu" and value.layout == torch.strided:
            size += value.numel() * value.element_size()
            if size <= MAX_KEPT_BYTES:
                kept[path] = value.detach().clone()
    return kept


def _inside(path: tuple, made_alone: dict, after: dict) -> list[dict]:
    """The differences within an object the request makes when it needs it (at ``path``), between
    the one the request made served alone and the one the earlier requests left: what can be set
    back, and each entry of a dict in it that holds a difference, removed (the object, made fresh,
    makes such an entry when it needs it; one it made at once and needs is not set back by the
    agreement that follows)."""
    alone, left = ({p: v for p, v in state.items() if p[:len(path)] == path} for state in (made_alone, after))
    found = candidates(alone, left)
    for changed in sorted((p for p in left if alone.get(p) != left[p]), key=len):
        entry = next((changed[:i] for i in range(len(changed), len(path), -1) if changed[i - 1][0] == "key"), None)
        if entry is not None and not any(entry[:len(c["path"])] == c["path"] for c in found):
            found = [c for c in found if c["path"][:len(entry)] != entry]
            found.append({"path": entry, "how": "remove", "alone": None, "after": left[entry]})
    return found


def find(job: dict) -> dict:
    """In a fork of the warm process: what differs, and what mattered (steps 1 and 2)."""
    from repro.callable import resolve_call
    fn = resolve_call(job["call"], job.get("call_kwargs"))
    *earlier, request = job["requests"]
    timeout = job.get("timeout", 600)

    def alone():  # the request served alone: the state it starts from, and what it changed (the objects
        start = snapshot()  # it made for itself among them): only that comes back through the pipe
        kept = _fresh_values(start)
        outputs = _outputs(fn, request)
        return start, kept, outputs, {p: v for p, v in snapshot().items() if start.get(p) != v}

    served_alone = Fork(alone)  # while this process serves the earlier requests
    for served in earlier:
        fn(served[2], served[3])
    after = snapshot()
    status, value = served_alone.result(timeout)
    if status != "ok":
        return {"named": False, "why": f"the request served alone failed: {value}"}
    fresh, kept, reference, changed_alone = value
    made_alone = {**fresh, **changed_alone}
    status, value = in_fork(_outputs, fn, request, timeout=timeout)
    if status != "ok" or _same(value, reference):
        return {"named": False, "why": "the request gave its result served alone this time: nothing to set back"
                if status == "ok" else f"the request failed after the earlier ones: {value}"}
    found = candidates(fresh, after, kept)
    if not found:
        return {"named": False, "why": f"no difference that could be set back was found in the state imported modules "
                                        f"reach (globals, class attributes, what they hold): state in {_UNREAD} is not "
                                        f"read"}
    if not _agrees(fn, request, reference, found, timeout):
        return {"named": False, "why": f"setting back every difference found ({len(found)}) in the state imported "
                                        f"modules reach did not give the result served alone: the state that "
                                        f"carried is elsewhere ({_UNREAD})"}
    chosen, trials, complete = narrowed(found, lambda subset: _agrees(fn, request, reference, subset, timeout))
    # an object the fresh process makes when the request needs it (a singleton, an entry of a cache: an
    # engine's model built on first use): which parts of it mattered?
    made = [c for c in chosen if c["how"] == "remove" or (c["how"] == "write" and c["alone"] == "None")]
    for candidate in made:
        inside = _inside(candidate["path"], made_alone, after)
        others = [c for c in chosen if c is not candidate]
        if not inside or not _agrees(fn, request, reference, others + inside, timeout):
            continue
        parts, more, whole = narrowed(inside, lambda subset: _agrees(fn, request, reference, others + subset,
                                                                    timeout))
        chosen, trials, complete = others + parts, trials + more + 1, complete and whole
    return {"named": True, "chosen": chosen, "differences": len(found), "trials": trials + 2, "complete": complete}


def main(argv) -> int:
    """``JOB.json OUT.json``: ``JOB["requests"]`` are the requests up to the one that differs,
    ``JOB["timeout"]`` the seconds one run of them may take."""
    from repro.callable import resolve_call
    from repro.warm import why_not_fork

    job_path, out_path = argv
    job = json.loads(Path(job_path).read_text())
    torch.set_num_threads(1)  # a fork of a process whose thread pool ran can hang in it
    if (why := why_not_fork()) is not None:
        found = {"named": False, "why": f"the search forks, and a fork of this process would not run: {why}"}
    else:
        status, found = in_fork(find, job, timeout=job.get("timeout", 600))
        if status != "ok":
            found = {"named": False, "why": f"the search failed: {found}"}
    if found["named"]:
        fn = resolve_call(job["call"], job.get("call_kwargs"))
        *earlier, request = job["requests"]
        watch = Watch([c["path"] for c in found["chosen"]])
        met = {}
        try:
            with watch:
                for served in earlier:
                    watch.request = _label(served)
                    fn(served[2], served[3])
                met = {path: _shown(_resolve(path)) for path in watch.paths}  # what the request meets, shown
                watch.start_reading(_label(request))
                fn(request[2], request[3])
        except Exception as exc:  # noqa: BLE001 - what was seen before it stands
            found["watch_failed"] = f"{type(exc).__name__}: {exc}"
        found["state"] = [{"state": expression(c["path"]), "how": c["how"], "alone": c["alone"],
                           "after": met.get(c["path"], c["after"]),
                           "left": watch.left.get(c["path"]), "read": watch.read.get(c["path"])}
                          for c in found.pop("chosen")]
    Path(out_path).write_text(json.dumps(found))
    return 0
