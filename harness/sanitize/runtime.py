"""The sanitizer's runtime: addresses and ids that remember where they came from.

While it is on, ``Tensor.data_ptr`` (and ``const_data_ptr``), the storages' ``data_ptr``
and ``builtins.id`` (for objects that can be weakly referenced) return an
:class:`Address`: an ``int`` of the same value that also remembers, weakly, what it was
taken from (the *storage* for a tensor, since views share it; the object itself for
``id``), when (a serial number) and where (a few frames of the caller's stack).
Python's dict and set lookups, tuple keys and ``==`` compare such ints with
``Address.__eq__``. When two of them are equal but were taken from different referents
and the older referent no longer holds that value (freed, its storage replaced, its data
moved), that is a **stale address match**: a cache keyed by the address met an entry of
an object that is gone. The comparison's result never changes.

Nothing here imports torch: this module is loaded at the start of every Python process
under ``address-reuse sanitize`` (see ``bootstrap/sitecustomize.py``) and patches torch
when, and only if, the process imports it. Switch it on with
``ADDRESS_REUSE_SANITIZE=FOLDER`` in the environment (each process writes
``FOLDER/<pid>.json`` as it exits) or :func:`start` / :func:`stop` in the process.

A lookup that rejects a stale entry after matching it (a liveness check, then removal)
is marked on its line with ``# address-reuse: validated`` or run inside
:func:`validated`. The mark is honoured only if the old key is held by nothing but the
sanitizer once the marked function returns (or the block ends): a cache that keeps the
stale entry is reported, marked or not.
"""

from __future__ import annotations

import atexit
import builtins
import copy
import dis
import gc
import itertools
import json
import linecache
import os
import sys
import threading
import weakref

ENV = "ADDRESS_REUSE_SANITIZE"  # a folder: sanitize this process and write its findings there
RECYCLE_ENV = "ADDRESS_REUSE_SANITIZE_RECYCLE_IDS"  # "1": hand a new object a dead one's id (see _Recycler)
PRAGMA = "address-reuse: validated"
STACK_DEPTH = 6  # frames kept of where a key was taken (ASan keeps more; each costs per key taken)
MAX_REMEMBERED = 1 << 20  # values whose last referent is remembered, to count addresses that came back

_real_id = builtins.id
_THIS_FILE = __file__
_serial = itertools.count(1)
_lock = threading.RLock()
_local = threading.local()


class Address(int):
    """An address or id of the same value as ``int(self)``, which remembers what it was taken
    from. ``int(address)`` drops the memory: use it where comparing raw numbers is the point."""

    __hash__ = int.__hash__

    def __eq__(self, other):
        equal = int.__eq__(self, other)
        if equal is True and type(other) is Address and _state.on:
            _met(self, other, sys._getframe(1))
        return equal

    def __ne__(self, other):
        unequal = int.__ne__(self, other)
        if unequal is False and type(other) is Address and _state.on:
            _met(self, other, sys._getframe(1))
        return unequal

    # An offset from an address is still that address's key (``ptr + offset``).
    def __add__(self, other):
        value = int.__add__(self, other)
        return _derived(self, value) if type(other) is int else value

    __radd__ = __add__

    def __sub__(self, other):
        value = int.__sub__(self, other)
        return _derived(self, value) if type(other) is int else value

    def __str__(self):
        return Text(int.__repr__(self), (self,))

    __repr__ = __str__

    def __format__(self, spec):
        text = int.__format__(self, spec)
        return Text(text, (self,)) if spec in ("", "d", "x", "#x", "X", "#X") else text

    # A key pickled or copied travels as a plain number: the memory stays in this process.
    def __reduce__(self):
        return (int, (int(self),))

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self


class Text(str):
    """``str()``, ``repr()`` or ``format()`` of an :class:`Address`, and text concatenated with it
    (``+``): it remembers every address it was built from, in order."""

    __hash__ = str.__hash__

    def __new__(cls, text, origins: tuple):
        self = str.__new__(cls, text)
        self.origins = origins
        return self

    def __eq__(self, other):
        equal = str.__eq__(self, other)
        if equal is True and type(other) is Text and _state.on:
            _met_all(self.origins, other.origins, sys._getframe(1))
        return equal

    def __ne__(self, other):
        unequal = str.__ne__(self, other)
        if unequal is False and type(other) is Text and _state.on:
            _met_all(self.origins, other.origins, sys._getframe(1))
        return unequal

    def __add__(self, other):
        value = str.__add__(self, other)
        if type(other) is Text:
            return Text(value, self.origins + other.origins)
        return Text(value, self.origins) if isinstance(other, str) else value

    def __radd__(self, other):
        return Text(str.__add__(other, self), self.origins) if isinstance(other, str) else NotImplemented

    def __reduce__(self):
        return (str, (str(self),))


def _met_all(ours: tuple, theirs: tuple, frame) -> None:
    """Equal texts built from the same number of addresses: each pair of equal ones met."""
    if len(ours) == len(theirs):
        for a, b in zip(ours, theirs):
            if int.__eq__(a, b):
                _met(a, b, frame)


class _State:
    """What one process has seen. Counters are per process; findings are merged by
    :mod:`harness.sanitize.report`."""

    def __init__(self):
        self.on = False
        self.users = 0  # start() calls not yet matched by stop()
        self.data_folder = None
        self.reset()

    def reset(self):
        self.keys_taken = 0
        # Lines that ran, each (id(code), line) -> code (an int pair hashes at once; a code object hashes
        # its constants): every frame on a stack where a key was taken, every lookup where two equal keys
        # met, stale or not, and the marked lookups that dropped a stale entry. ``scan --confirm`` tells
        # a finding reached from one not run by them.
        self.taken_under: dict = {}
        self.last_stack: tuple = ()  # the stack last added to taken_under
        self.met_at: dict = {}
        self.validated_at: dict = {}
        self.came_back = 0  # a key taken at a value that an earlier, other referent had
        self.last_referent: dict[int, object] = {}  # value -> token of the referent it was last taken from
        self.findings: dict[tuple, dict] = {}
        self.validated = 0  # stale matches on a marked lookup that dropped the old key
        self.recycled = 0  # ids the recycler handed a new object, that a dead object had
        self.pending: list[_Pending] = []  # marked matches waiting for their lookup to finish
        self.label = None  # the test or request running now
        self.collecting = False  # inside a garbage collection (gc.callbacks)


_state = _State()


def _tag(value: int, referent, kind: str, about, frame) -> Address:
    address = Address(value)
    address.referent = referent  # a weakref: its identity is the referent's while we hold it
    address.kind = kind
    address.serial = next(_serial)
    address.about = about
    address.stack = _stack(frame)
    address.owner = None  # for a data_ptr: a weakref to the tensor it was read from
    state = _state
    state.keys_taken += 1
    if address.stack != state.last_stack:  # a loop takes key after key at one stack: added once
        _ran(state.taken_under, address.stack)
        state.last_stack = address.stack
    last = state.last_referent
    previous = last.get(value)
    if previous is not None and previous is not referent:
        state.came_back += 1
    elif previous is None and len(last) >= MAX_REMEMBERED:
        for old in list(itertools.islice(last, MAX_REMEMBERED // 2)):
            del last[old]
    last[value] = referent
    if state.pending:
        _settle()
    return address


def _derived(origin: Address, value: int) -> Address:
    address = Address(value)
    address.__dict__.update(origin.__dict__)
    return address


def _stack(frame) -> tuple:
    frames = []
    while frame is not None and len(frames) < STACK_DEPTH:
        code = frame.f_code
        if code.co_filename != _THIS_FILE:
            frames.append((code, frame.f_lineno))
        frame = frame.f_back
    return tuple(frames)


# --- what became of a referent -------------------------------------------------------------


def _fate(address: Address) -> str | None:
    """None while the referent the address was taken from still holds that value; else what
    became of it, in a few words."""
    referent = address.referent()
    if address.kind == "id":
        return None if referent is not None else "freed (the object was garbage-collected)"
    owner = address.owner() if address.owner is not None else None
    if referent is None:
        if owner is not None:
            return "storage replaced (the tensor lives on, on another storage: set_ or .data =); the old storage freed"
        return "freed (its storage was released)"
    base = _ORIGINAL["storage_data_ptr"](referent)  # the untracked data_ptr: no key taken here
    if not base <= int(address) <= base + referent.nbytes():
        return "data moved (its storage was resized or re-pointed)"
    return None


# --- a match ---------------------------------------------------------------------------------


class _Pending:
    """A stale match on a marked lookup, judged once its function has returned."""

    __slots__ = ("old", "frame", "finding")

    def __init__(self, old, frame, finding):
        self.old, self.frame, self.finding = old, frame, finding


# ``d[key] = value`` and ``del d[key]`` compare keys too, but read nothing: storing over or
# deleting a dead object's entry is how a cache forgets it, never a stale value served.
_STORE, _DELETE = dis.opmap["STORE_SUBSCR"], dis.opmap["DELETE_SUBSCR"]


def _met(a: Address, b: Address, frame) -> None:
    """``a == b`` was asked (``a`` the stored key in a dict or set) and they are equal."""
    _state.met_at[(_real_id(frame.f_code), frame.f_lineno)] = frame.f_code
    if a.referent is b.referent:
        return  # the same storage or object: not stale
    if _state.collecting:
        # The cyclic collector clears weak references before it runs finalizers: a ``__del__``
        # taking ``id(self)`` would look like a new object meeting its own dead self.
        return
    op = frame.f_code.co_code[frame.f_lasti]
    if op == _STORE:
        # A dict keeps its old key object when a value is stored over an equal key: from now
        # on that object stands for the new key, so later lookups of the entry are not stale.
        if a.serial < b.serial:
            a.__dict__.update(b.__dict__)
        return
    if op == _DELETE:
        return
    old, new = (a, b) if a.serial < b.serial else (b, a)
    fate = _fate(old)
    if fate is None:
        return  # the older referent still holds this value: two live aliases, not reuse
    with _lock:
        finding = {"new": new, "compared": (frame.f_code, frame.f_lineno), "fate": fate,
                   "label": _state.label, "thread": threading.current_thread().name}
        block = getattr(_local, "validated", None)
        if block is not None or _marked(frame.f_code.co_filename, frame.f_lineno):
            pending = _Pending(old, frame, finding)
            (block if block is not None else _state.pending).append(pending)
            return
        _count(old, finding, marked=False)


def _count(old: Address, finding: dict, marked: bool) -> None:
    """Record one stale match. One finding per pair of places the two keys were taken; each
    place they were compared at is listed under it with its own count."""
    new = finding["new"]
    key = (_where(old.stack), _where(new.stack))
    kept = _state.findings.get(key)
    if kept is None:
        _state.findings[key] = kept = {
            "kind": old.kind, "value": int(old), "fate": finding["fate"],
            "old": {"taken": _frames(old.stack), "object": old.about},
            "new": {"taken": _frames(new.stack), "object": new.about},
            "compared": [], "count": 0, "labels": [], "thread": finding["thread"]}
    kept["count"] += 1
    site = _frame(*finding["compared"])
    for compared in kept["compared"]:
        if (compared["file"], compared["line"]) == (site["file"], site["line"]):
            compared["count"] += 1
            compared["marked_but_kept"] = compared["marked_but_kept"] or marked
            break
    else:
        kept["compared"].append(dict(site, count=1, marked_but_kept=marked))
    label = finding["label"]
    if label is not None and label not in kept["labels"]:
        kept["labels"].append(label)


def _settle(final: bool = False) -> None:
    """Judge the marked matches whose lookup has returned (all of them when ``final``)."""
    with _lock:
        running = set() if final else _running_frames()
        waiting, finished = [], []
        for pending in _state.pending:
            (waiting if _real_id(pending.frame) in running else finished).append(pending)
        _state.pending = waiting
        _judge(finished, waiting)


def settle() -> None:
    """Judge every marked match now: the end of a block, a test or the process."""
    if _state.pending:
        _settle(final=True)


def _judge(finished: list, waiting: list) -> None:
    """A marked match is honoured when its old key is held by nothing but the sanitizer's
    own records (the lookup dropped the stale entry); otherwise it is a finding."""
    groups: dict[int, tuple] = {}  # id of an old key -> (that key, the matches that met it)
    for pending in finished:
        # A returned frame that we hold keeps its locals (the lookup's entry, and through it
        # the old key): let go of them first. A frame still running cannot be cleared.
        try:
            pending.frame.clear()
        except RuntimeError:
            pass
        pending.frame = None
        groups.setdefault(_real_id(pending.old), (pending.old, []))[1].append(pending)
        pending.old = None
    while groups:
        old, group = groups.popitem()[1]
        ours = 2 + sum(p.old is old for p in waiting)  # this name, getrefcount's argument, waiting records
        kept = sys.getrefcount(old) > ours
        for pending in group:
            if kept:
                _count(old, pending.finding, marked=True)
            else:
                _state.validated += 1
                _ran(_state.validated_at, (pending.finding["compared"],))
            pending.frame = pending.finding = None


def _running_frames() -> set:
    running = set()
    for frame in sys._current_frames().values():
        while frame is not None:
            running.add(_real_id(frame))
            frame = frame.f_back
    return running


_marks: dict[tuple, bool] = {}


def _marked(filename: str, line: int) -> bool:
    key = (filename, line)
    marked = _marks.get(key)
    if marked is None:
        marked = _marks[key] = PRAGMA in linecache.getline(filename, line)
    return marked


class validated:
    """``with validated():`` marks the lookups inside as validated: a stale match there is
    not reported if the old key is dropped by the end of the block (the cache rejected and
    removed the stale entry); it is reported if the entry is kept."""

    def __enter__(self):
        self.outer = getattr(_local, "validated", None)
        self.matches = _local.validated = []
        return self

    def __exit__(self, *exc):
        _local.validated = self.outer
        with _lock:
            matches, self.matches = self.matches, []
            _judge(matches, _state.pending)
        return False


# --- where -------------------------------------------------------------------------------------


def _site(code, line) -> tuple:
    return (code.co_filename, line, code.co_name)


def _where(stack) -> tuple:
    return tuple(_site(code, line) for code, line in stack)


def _frame(code, line) -> dict:
    return {"file": code.co_filename, "line": line, "function": code.co_name,
            "source": linecache.getline(code.co_filename, line).strip()}


def _frames(stack) -> list:
    return [_frame(code, line) for code, line in stack]


# --- recycled ids ---------------------------------------------------------------------------------


class _Recycler:
    """Hands each new object whose ``id()`` is taken the id of a dead object of its type whose id
    was taken, as an allocator that always reuses would: a key that outlives its object then meets
    a new one at once, instead of when CPython happens to put a new object in the dead one's slot
    (which depends on how many objects of its size were made in between). First the ids that
    outlived their object (some key taken from it was still held when it died: stored in a dict,
    a set, a tuple), the last to die first; then the others, the same way.

    The ids it hands out are odd numbers, so never the address of a live object (every object is
    at least 8-byte aligned): the only equal ids are an object's own and a dead object's. An object
    keeps the id it was given while it lives. Objects that existed when recycling began keep their
    real id: their id may have been stored before, untracked. Code that turns an id back into an
    object (``ctypes.cast(id(x), ...)``) cannot run with recycling on."""

    BASE = 0x7E5A_0000_0001  # odd; looks like an address in a report

    def __init__(self, keep_existing: bool = True):
        self.existing: dict[int, weakref.ref] = {}  # real id -> the object that had it at start
        for obj in gc.get_objects() if keep_existing else ():
            if type(obj).__weakrefoffset__:
                try:
                    self.existing[_real_id(obj)] = weakref.ref(obj)
                except TypeError:
                    pass
        self.given: dict[int, tuple] = {}  # real id -> (weakref with a callback, id given)
        self.held: dict[int, int] = {}  # id given -> how many keys taken at it are alive
        # type -> (ids that outlived their object, the other ids of its dead objects), the last freed last
        self.free: dict[type, tuple[list[int], list[int]]] = {}
        self.fresh = itertools.count()

    def id_of(self, obj, real: int) -> int:
        existing = self.existing.get(real)
        if existing is not None:
            if existing() is obj:
                return real
            del self.existing[real]  # that object died; a new one lives at its address
        given = self.given.get(real)
        if given is not None:
            return given[1]
        kind = self.kind(type(obj))
        outlived, others = self.free.get(kind, ((), ()))
        if outlived or others:
            value = (outlived or others).pop()
            _state.recycled += 1
        else:
            value = self.BASE + 2 * next(self.fresh)
        self.given[real] = (weakref.ref(obj, self._dead(real, kind, value)), value)
        return value

    @staticmethod
    def kind(cls: type) -> type:
        """The type whose dead objects' ids ``cls``'s objects take: ``cls`` itself, or for a class
        made at run time for one object (``torch.nn.utils.parametrize`` gives each module its own
        subclass), the first class up its MRO that its module names. Not cached: a class made at
        run time may hold its object (a closure), and a cache would keep both alive."""
        for klass in cls.__mro__:
            module = sys.modules.get(klass.__module__)
            if module is None or "<locals>" in klass.__qualname__:
                continue
            if getattr(module, klass.__name__, None) is klass or "." in klass.__qualname__:
                return klass
        return cls

    def hold(self, address: Address) -> None:
        """``address`` is a key taken at an id this recycler gave: count it while it lives (its
        ``__dict__``, shared by keys built from it, goes with the last of them)."""
        value = int(address)
        if value & 1 and value >= self.BASE:
            self.held[value] = self.held.get(value, 0) + 1
            address._held = _Held(self.held, value)

    def _dead(self, real: int, kind: type, value: int):
        def dead(_):
            self.given.pop(real, None)
            outlived, others = self.free.setdefault(kind, ([], []))
            (outlived if self.held.get(value) else others).append(value)
        return dead


class _Held:
    """Counts one live key at an id the recycler gave, until that key is gone."""

    __slots__ = ("counts", "value")

    def __init__(self, counts: dict, value: int):
        self.counts, self.value = counts, value

    def __del__(self):
        left = self.counts.get(self.value, 0) - 1
        if left > 0:
            self.counts[self.value] = left
        else:
            self.counts.pop(self.value, None)


_recycler: _Recycler | None = None


# --- the hooks -----------------------------------------------------------------------------------

_ORIGINAL: dict = {}


def _id(obj) -> int:
    value = _real_id(obj)
    if not _state.on or not type(obj).__weakrefoffset__:
        return value
    try:
        referent = weakref.ref(obj)
    except TypeError:
        return value
    recycler = _recycler
    caller = sys._getframe(1)
    if recycler is None or not _recyclable(obj, caller):
        return _tag(value, referent, "id", _describe(obj), caller)
    with _lock:
        address = _tag(recycler.id_of(obj, value), referent, "id", _describe(obj), caller)
        recycler.hold(address)
    return address


# torch.compile's guards store ids taken here and compare them with object pointers in C++:
# ids taken by the compiler itself must be real, or every compiled call fails its own guard.
_COMPILER_FILES = tuple(os.path.join("torch", part) for part in ("_dynamo", "_guards.py", "_inductor"))


def _recyclable(obj, caller) -> bool:
    """Whether a recycled id may stand for ``obj``'s real one here. Not for classes and modules
    (they live as long as the program, nearly always, and code that hands their ids to C, as the
    compiler's guards do, must get the pointer), nor for ids the compiler takes."""
    if isinstance(obj, (type, type(sys))):
        return False
    return not any(part in caller.f_code.co_filename for part in _COMPILER_FILES)


_id.__doc__ = _real_id.__doc__
_id.__name__ = _id.__qualname__ = "id"
_id.__wrapped__ = _real_id  # for a recorder that must not take keys of its own (repro.stream)


def _describe(obj) -> dict:
    about = {"type": f"{type(obj).__module__}.{type(obj).__qualname__}"}
    tensor = _ORIGINAL.get("tensor")  # set once torch is whole and patched
    if tensor is not None and isinstance(obj, tensor):
        try:
            about.update(shape=list(obj.shape), dtype=str(obj.dtype), device=str(obj.device))
        except Exception:  # noqa: BLE001 - a subclass without a shape still has an id
            pass
    return about


def _tensor_hook(original):
    def data_ptr(self):
        value = original(self)
        if not value or not _state.on:
            return value
        try:
            storage = self.untyped_storage()
            referent = weakref.ref(storage)
        except (RuntimeError, TypeError, NotImplementedError):
            return value  # no single storage (nested, sparse, a wrapper subclass)
        address = _tag(value, referent, "data_ptr", _describe(self), sys._getframe(1))
        address.owner = weakref.ref(self)
        return address

    data_ptr.__name__ = data_ptr.__qualname__ = original.__name__
    data_ptr.__doc__ = original.__doc__
    return data_ptr


def _storage_hook(original, untyped):
    def data_ptr(self):
        value = int(original(self))
        if not value or not _state.on:
            return value
        storage = self if untyped else self._untyped_storage
        about = {"type": type(self).__name__, "nbytes": storage.nbytes(), "device": str(storage.device)}
        return _tag(value, weakref.ref(storage), "data_ptr", about, sys._getframe(1))

    data_ptr.__name__ = data_ptr.__qualname__ = "data_ptr"
    data_ptr.__doc__ = original.__doc__
    return data_ptr


def _patch_torch(torch) -> None:
    if "tensor_data_ptr" in _ORIGINAL:
        return
    tensor, storage, typed = torch.Tensor, torch.UntypedStorage, torch.TypedStorage
    # torch fills its table of function names (torch.overrides.resolve_name) once per process:
    # filled while the hooks are in, it would never again name the real data_ptr after we leave.
    torch.overrides.get_overridable_functions()
    _ORIGINAL.update(tensor=tensor, tensor_data_ptr=tensor.data_ptr, storage_data_ptr=storage.data_ptr,
                     typed_data_ptr=typed.data_ptr)
    tensor.data_ptr = _tensor_hook(tensor.data_ptr)
    if hasattr(tensor, "const_data_ptr"):
        _ORIGINAL["tensor_const_data_ptr"] = tensor.const_data_ptr
        tensor.const_data_ptr = _tensor_hook(tensor.const_data_ptr)
    storage.data_ptr = _storage_hook(_ORIGINAL["storage_data_ptr"], untyped=True)
    typed.data_ptr = _storage_hook(_ORIGINAL["typed_data_ptr"], untyped=False)


def _unpatch_torch() -> None:
    torch = sys.modules.get("torch")
    if torch is None or "tensor_data_ptr" not in _ORIGINAL:
        return
    torch.Tensor.data_ptr = _ORIGINAL.pop("tensor_data_ptr")
    if "tensor_const_data_ptr" in _ORIGINAL:
        torch.Tensor.const_data_ptr = _ORIGINAL.pop("tensor_const_data_ptr")
    torch.UntypedStorage.data_ptr = _ORIGINAL["storage_data_ptr"]
    torch.TypedStorage.data_ptr = _ORIGINAL.pop("typed_data_ptr")
    _ORIGINAL.pop("tensor")


class _PatchTorchOnImport:
    """A meta path finder that patches torch right after the process imports it, so that
    starting the sanitizer costs a process that never uses torch nothing."""

    def find_spec(self, name, path=None, target=None):
        if name != "torch":
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None and spec.loader is not None and hasattr(spec.loader, "exec_module"):
                run = spec.loader.exec_module

                def exec_module(module, run=run):
                    run(module)
                    if _state.on:
                        _patch_torch(module)

                spec.loader.exec_module = exec_module
                return spec
        return None


_finder = _PatchTorchOnImport()


# --- on and off --------------------------------------------------------------------------------


def _gc_phase(phase: str, info: dict) -> None:
    _state.collecting = phase == "start"


def start(label: str | None = None, recycle_ids: bool = False) -> None:
    """Switch tracking on in this process (nested calls count; :func:`stop` matches each).
    ``recycle_ids``: from now on, a new object gets a dead object's id (:class:`_Recycler`); for
    a whole process, not a block (an id stored before would no longer be met)."""
    global _recycler
    with _lock:
        _state.users += 1
        if label is not None:
            _state.label = label
        if recycle_ids and _recycler is None:
            _recycler = _Recycler()
        if _state.on:
            return
        _state.on = True
        _state.last_referent.clear()  # a new session: what came back is counted from here
        gc.callbacks.append(_gc_phase)
        builtins.id = _id
        torch = sys.modules.get("torch")
        if torch is not None and hasattr(torch, "Tensor"):
            _patch_torch(torch)
        elif _finder not in sys.meta_path:
            sys.meta_path.insert(0, _finder)


def stop() -> None:
    """Undo one :func:`start`; the last one switches tracking off and settles marked matches."""
    global _recycler
    with _lock:
        _state.users = max(0, _state.users - 1)
        if _state.users or not _state.on:
            return
        _settle(final=True)
        _state.on = False
        _recycler = None
        if _gc_phase in gc.callbacks:
            gc.callbacks.remove(_gc_phase)
        builtins.id = _real_id
        _unpatch_torch()
        if _finder in sys.meta_path:
            sys.meta_path.remove(_finder)


def set_label(label: str | None) -> None:
    """Attribute the matches that follow to ``label`` (a test id, a request)."""
    _state.label = label


def snapshot() -> dict:
    """What this process has seen so far, as plain data (the data file's contents)."""
    with _lock:
        if _state.pending:
            _settle()
        return {"pid": os.getpid(), "argv": list(sys.argv), "keys_taken": _state.keys_taken,
                "came_back": _state.came_back, "validated": _state.validated, "recycled": _state.recycled,
                "findings": copy.deepcopy(list(_state.findings.values())),
                "taken_under": _sites(_state.taken_under), "met_at": _sites(_state.met_at),
                "validated_at": _sites(_state.validated_at)}


def _ran(lines: dict, sites) -> None:
    """Add each (code, line) of ``sites`` to ``lines`` (see ``_State.reset``)."""
    for code, line in sites:
        lines[(_real_id(code), line)] = code


def _sites(lines: dict) -> list:
    """``[file, line]`` of each line that ran, once each."""
    return sorted({(code.co_filename, line) for (_, line), code in lines.items()})


def forget() -> None:
    """Start counting afresh (the referents seen stay remembered)."""
    with _lock:
        remembered = _state.last_referent
        _state.reset()
        _state.last_referent = remembered


def _forked() -> None:
    """In a forked child: a lock that another thread of the parent held at the fork stays held
    forever here, so the child gets a fresh one; then it counts afresh (its own findings)."""
    global _lock
    _lock = threading.RLock()
    forget()


# --- a process under ``address-reuse sanitize`` -------------------------------------------------


def start_from_environment() -> bool:
    """Called at interpreter start (sitecustomize): on when ``ADDRESS_REUSE_SANITIZE`` names
    a folder. The process writes ``FOLDER/<pid>.json`` at exit, also through ``os._exit``
    and in the child of a fork (which starts with no findings of its own)."""
    folder = os.environ.get(ENV)
    if not folder or _state.data_folder:
        return False
    _state.data_folder = folder
    start(recycle_ids=os.environ.get(RECYCLE_ENV) == "1")
    atexit.register(write_data_file)
    real_exit = os._exit

    def _exit(status):
        write_data_file()
        real_exit(status)

    os._exit = _exit
    os.register_at_fork(after_in_child=_forked)
    return True


def write_data_file(folder: str | None = None) -> None:
    """This process's data into ``folder`` (default: the one the environment named), whole or
    not at all. Its own rename, not ``harness.files``: this module may be loaded on its own, in
    a Python without the project."""
    folder = folder or _state.data_folder
    if not folder:
        return
    try:
        if _state.on:
            _settle(final=True)
        data = snapshot()
        path = os.path.join(folder, f"{os.getpid()}.json")
        temporary = f"{path}.{_real_id(data)}.tmp"
        with open(temporary, "w", encoding="utf-8") as f:
            json.dump(data, f, default=str)
        os.replace(temporary, path)
    except Exception as exc:  # noqa: BLE001 - exiting: say it, never raise out of atexit
        print(f"address-reuse sanitize: could not write this process's findings: {exc}", file=sys.stderr)
