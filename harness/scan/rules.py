"""The flow model: where an address is read, where it goes, and where it keys a cache.

Source is parsed, never imported. A *source* is a value that says where an object
lives (``data_ptr()``, ``id()``, ``_cdata``, the data field of ``__array_interface__``,
``ctypes.addressof``). It is followed through assignments, containers, formatting
(hash, str, f-strings, tuples), attributes (per class and field, across the package),
returns and arguments (through per-function summaries, across modules by name), and
callbacks handed to map-like utilities, to a *sink*: the key of a mapping or set that
outlives the object, or the argument of a functools cache.

Each function gets a :class:`Summary` (what it returns, which parameters reach a
key, which parameters are used as a mapping); other modules import the summaries.
"""

from __future__ import annotations

import ast
import builtins
import functools
import re
from dataclasses import dataclass, field

from cache_impl.levels import Level
from harness import how_to_run

CODES = {
    "ARH001": "mapping keyed by a tensor's address or identity",
    "ARH002": "functools cache over a tensor, or over a key built from its address",
    "ARH003": "WeakKeyDictionary keyed by tensors",
    "ARH004": "class that hashes by a tensor's address",
    "ARH005": "an address or id remembered in a field or global, compared with another object's",
}

# What a key can be made of: (kind, label) pairs. The first four say *where* an
# object lives; a key holding one of them can match a different object later.
ADDRESS_KINDS = ("address", "storage address", "object address", "identity")
KIND_ORDER = ("key class",) + ADDRESS_KINDS + ("version", "layout")
PARAM = "param"  # (PARAM, name): the value of a parameter, resolved at each call site
STORAGE_METHODS = {"untyped_storage", "storage", "_storage", "_typed_storage"}
LAYOUT_METHODS = {"size", "stride", "storage_offset", "numel", "dim"}
LAYOUT_ATTRS = {"shape", "dtype", "device", "layout", "ndim"}
ARRAY_INTERFACES = {"__array_interface__", "__cuda_array_interface__"}
# Calls that pass the parts of their arguments through to their result.
TRANSPARENT_CALLS = {"tuple", "hash", "str", "int", "hex", "repr", "frozenset", "format", "list", "sorted",
                     "reversed", "zip", "enumerate"}
# Utilities that call their first argument on each element (or leaf): the result holds what it returns.
MAP_CALLS = {"map", "tree_map", "tree_map_only", "tree_map_", "tree_map_with_path", "tree_flatten", "map_structure",
             "apply_to_collection", "map_nested"}

# Methods that only a tensor has (among what keys are built from): a name they are
# called on is a tensor.
TENSOR_METHODS = {"data_ptr", "untyped_storage", "storage_offset", "stride", "is_inference",
                  "element_size", "is_contiguous", "contiguous", "detach", "requires_grad_"}
TENSOR_CONSTRUCTORS = {"tensor", "as_tensor", "from_numpy", "empty", "zeros", "ones", "full", "rand",
                       "randn", "randint", "arange", "linspace", "cat", "stack", "empty_like",
                       "zeros_like", "ones_like", "rand_like", "randn_like", "full_like", "empty_strided"}
MAPPING_METHODS = {"get": "read", "__getitem__": "read", "pop": "popped", "__delitem__": "popped",
                   "setdefault": "written", "put": "written", "__setitem__": "written",
                   "move_to_end": "read", "__contains__": "tested", "add": "added", "discard": "popped"}
# A value kept in a field or global and compared with an object's own later (ARH005), not a mapping.
REMEMBERED = ("remembered", "compared")
# Made fresh in the function that uses it: a local bound to one of these lives for one call.
FRESH_CONTAINERS = {"dict", "set", "list", "defaultdict", "OrderedDict", "Counter", "WeakValueDictionary",
                    "WeakKeyDictionary", "deque"}
# Builtins and the methods of builtin containers and loggers: a call to one hands the address to no
# function of the package (``get`` and the other mapping methods excepted: ``cache.get(device, key)``).
BUILTIN_NAMES = set(dir(builtins)) | set(dir(list)) | set(dir(dict)) | set(dir(set)) | set(dir(str)) \
    | {"debug", "info", "warning", "error", "exception", "critical", "log"}
FILL_METHODS = {"append", "extend", "insert", "appendleft"}
CTYPES_POINTERS = {"c_void_p", "c_char_p", "c_wchar_p", "cu_device_ptr", "CUdeviceptr"}
WEAKREF_NAMES = {"ref", "WeakMethod", "finalize", "WeakIdRef", "WeakTensorRef", "StorageWeakRef"}
WEAK_VALUE_MAPPINGS = {"WeakValueDictionary"}
TENSOR_ANNOTATION = re.compile(r"\bTensor\b")
# The prefix under which a module is handed the summary of a method no other function of the package
# shares a name with (``runner``): a call on an object of unknown class may reach it from any module.
UNIQUE_METHOD = "?."
MAX_ROUNDS = 6  # rounds of the module's fixed point; each round follows values one step further


Parts = frozenset  # of (kind, label)
Step = tuple  # (path, line, col, what happens there)
Flow = tuple  # of Step, from the source to the last step before the sink


@dataclass
class Finding:
    """One place where a cache may hand one object's result to another."""

    path: str
    line: int
    col: int  # 1-based, as flake8 and ruff print it
    code: str
    message: str
    key: list[str] = field(default_factory=list)
    guards: list[str] = field(default_factory=list)  # present
    missing: list[str] = field(default_factory=list)  # guards looked for and not found
    level: str | None = None  # the level the guards suggest; only an audit settles it
    audit: str | None = None  # the command that settles it, for a class with get/put
    notes: list[str] = field(default_factory=list)
    suppressed: str | None = None  # the reason given in a ``# noqa`` comment
    flow: list[dict] = field(default_factory=list)  # {"path", "line", "col", "text"}: source ... sink
    why: str = ""  # one line: why the key can match another object
    lines: list[int] = field(default_factory=list)  # every line of ``path`` that uses the cache, ``line`` first
    cache: str = ""  # the mapping or field as the code names it (``self._entries``), where there is one
    run: str | None = None  # with --confirm: confirmed, reached without reuse or not reached (scan.confirm)
    run_detail: str = ""  # what the run saw there
    # Why no stale match can happen: the entry holds its object (so its address or id stays taken while
    # the entry lives), or the entry is removed when its object dies. Shown, never counted.
    safe: str | None = None

    @property
    def counts(self) -> bool:
        """Reported and counted (the exit status): neither suppressed nor safe."""
        return not self.suppressed and not self.safe


@dataclass
class Use:
    """A key reaching a mapping: where, how, what the key is made of and the way it came."""

    path: str
    line: int
    col: int
    how: str  # read, written, tested, popped, added
    mapping: str  # the mapping's expression where it is used
    cls: str  # the class of the method using it ("" outside a class)
    parts: Parts
    flow: Flow
    value: str = ""  # what is stored under the key, for a write
    guards: dict | None = None  # computed where the mapping lives, for a use found through a call


@dataclass
class Summary:
    """What a function does with its arguments, as its callers see it."""

    params: list[str]  # positional parameters, without self/cls
    returns: Parts = Parts()
    returns_flow: Flow = ()
    returns_persistent: bool = False  # returns a mapping that outlives the call (a getter)
    key_params: dict = field(default_factory=dict)  # parameter -> [Use]: it reaches a persistent key
    mapping_params: dict = field(default_factory=dict)  # parameter -> [Use]: used as a mapping, address key
    field_params: dict = field(default_factory=dict)  # parameter -> {(class, attr)}: stored in a field
    filled_params: dict = field(default_factory=dict)  # parameter -> (parts, flow) appended to it

    def state(self) -> tuple:
        """What callers see of it, to tell when it changed."""
        return (self.returns, self.returns_persistent, *(tuple(sorted((k, len(v)) for k, v in table.items()))
                                                         for table in (self.key_params, self.mapping_params,
                                                                       self.field_params, self.filled_params)))


def describe_parts(parts: Parts) -> list[str]:
    """``{("address", "data_ptr()"), ("layout", "shape")}`` -> ``["address (data_ptr())", "layout (shape)"]``."""
    by_kind: dict[str, set[str]] = {}
    for kind, label in parts:
        by_kind.setdefault(kind, set()).add(label)
    return [f"{kind} ({', '.join(sorted(by_kind[kind]))})" for kind in KIND_ORDER if kind in by_kind]


def and_join(items: list[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def is_address(parts: Parts) -> bool:
    return any(kind in ADDRESS_KINDS for kind, _ in parts)


def params_in(parts: Parts) -> list[str]:
    return sorted(label for kind, label in parts if kind == PARAM)


def without_params(parts: Parts) -> Parts:
    return Parts(p for p in parts if p[0] != PARAM)


def key_class_names(parts: Parts) -> list[str]:
    return sorted(label for kind, label in parts if kind == "key class")


def dotted(node: ast.AST) -> str:
    """``functools.lru_cache`` -> that text; anything else but names and attributes -> ``""``."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = dotted(node.value)
        return f"{inner}.{node.attr}" if inner else ""
    return ""


def last_name(node: ast.AST) -> str:
    return dotted(node).rsplit(".", 1)[-1]


_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}


def child_nodes(node: ast.AST) -> list[ast.AST]:
    """``ast.iter_child_nodes`` without the Load/Store markers: the scan visits every node of
    thousands of files, and a third of them are those markers."""
    kind = type(node)
    names = _CHILD_FIELDS.get(kind)
    if names is None:
        names = _CHILD_FIELDS[kind] = tuple(name for name in kind._fields if name != "ctx")
    found = []
    for name in names:
        value = getattr(node, name, None)
        if isinstance(value, ast.AST):
            found.append(value)
        elif isinstance(value, list):
            found.extend(item for item in value if isinstance(item, ast.AST))
    return found


def walk(root: ast.AST) -> list[ast.AST]:
    """Every node under ``root`` (itself too), as ``ast.walk`` but without the Load/Store markers."""
    found, stack = [], [root]
    while stack:
        node = stack.pop()
        found.append(node)
        stack.extend(child_nodes(node))
    return found


def annotation_is_tensor(annotation: ast.AST | None) -> bool:
    if annotation is None:
        return False
    text = annotation.value if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str) \
        else ast.unparse(annotation)
    return bool(TENSOR_ANNOTATION.search(text))


def annotation_class(annotation: ast.AST | None) -> str:
    """``state: TextKVCacheState`` / ``"State"`` / ``Optional[State]`` -> the class name, else ``""``."""
    if annotation is None:
        return ""
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        text = annotation.value
    elif isinstance(annotation, (ast.Name, ast.Attribute)):
        text = dotted(annotation)
    elif isinstance(annotation, ast.Subscript) and last_name(annotation.value) == "Optional":
        return annotation_class(annotation.slice)
    elif isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):  # State | None
        return annotation_class(annotation.left) or annotation_class(annotation.right)
    else:
        return ""
    name = text.rsplit(".", 1)[-1]
    return name if re.fullmatch(r"[A-Z]\w*", name) else ""


@dataclass
class KeyClass:
    """A class that hashes by a tensor's address (such as ``TensorAsKey``)."""

    node: ast.ClassDef
    parts: Parts
    weakref: bool


class Scope:
    """One function (or the module body): its names, their values and types, and its summary."""

    def __init__(self, node: ast.AST, cls: ast.ClassDef | None, parent: Scope | None = None,
                 is_module: bool = False):
        self.node = node
        self.cls = cls
        self.parent = parent  # the enclosing function, for closures
        self.is_module = is_module
        self.nodes: list[ast.AST] = []  # its own nodes, not those of nested functions or classes
        self.params: set[str] = set()
        self.tensors: set[str] = set()
        self.annotated: set[str] = set()  # parameters annotated as tensors
        self.loop_iters: dict[str, list[ast.AST]] = {}  # a name a loop here binds -> what each such loop runs over
        self.types: dict[str, str] = {}  # name -> class name, from annotations and constructor calls
        self.qualname = ""
        positional: list[str] = []
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            self.qualname = f"{cls.name}.{node.name}" if cls is not None else node.name
            args = node.args
            for arg in args.posonlyargs + args.args + args.kwonlyargs + [args.vararg, args.kwarg]:
                if arg is not None:
                    self.params.add(arg.arg)
                    if annotation_is_tensor(arg.annotation):
                        self.annotated.add(arg.arg)
                    elif annotation_class(arg.annotation):
                        self.types[arg.arg] = annotation_class(arg.annotation)
            positional = [a.arg for a in args.posonlyargs + args.args]
            is_static = any(last_name(d) == "staticmethod" for d in node.decorator_list)
            if cls is not None and positional and not is_static:
                self.types[positional[0]] = cls.name  # self (or cls)
                self.params.discard(positional[0])
                positional = positional[1:]
        self.summary = Summary(positional)

    def finish(self) -> None:
        """Read the names, once ``nodes`` is filled."""
        self.declared_global: set[str] = set()
        self.declared_nonlocal: set[str] = set()
        self.assigned: set[str] = set()
        self.aliases: dict[str, list[ast.AST]] = {}  # local name -> the values bound to it
        nested: set[str] = set()
        returned: set[str] = set()
        for n in self.nodes:
            kind = type(n)
            if kind is ast.Name and isinstance(n.ctx, ast.Store):
                self.assigned.add(n.id)
            elif kind is ast.Call:
                func = n.func
                if isinstance(func, ast.Attribute) and func.attr in TENSOR_METHODS and isinstance(func.value, ast.Name):
                    self.tensors.add(func.value.id)
            elif kind is ast.Assign or kind is ast.AnnAssign:
                targets = n.targets if kind is ast.Assign else [n.target]
                pairs = [(t, n.value) for t in targets]
                if len(targets) == 1 and isinstance(targets[0], ast.Tuple) and isinstance(n.value, ast.Tuple) \
                        and len(targets[0].elts) == len(n.value.elts):  # ``key, table = id(m), ctx.table``
                    pairs = list(zip(targets[0].elts, n.value.elts))
                for t, value in pairs:
                    if isinstance(t, ast.Name) and value is not None:
                        self.aliases.setdefault(t.id, []).append(value)
                        if isinstance(value, ast.Call) and re.fullmatch(r"[A-Z]\w*", last_name(value.func)):
                            self.types.setdefault(t.id, last_name(value.func))
                if kind is ast.AnnAssign and isinstance(n.target, ast.Name) and annotation_class(n.annotation):
                    self.types[n.target.id] = annotation_class(n.annotation)
            elif kind is ast.Global:
                self.declared_global.update(n.names)
            elif kind is ast.Nonlocal:
                self.declared_nonlocal.update(n.names)
            elif kind is ast.FunctionDef or kind is ast.AsyncFunctionDef:
                nested.add(n.name)
            elif kind is ast.Return and isinstance(n.value, ast.Name):
                returned.add(n.value.id)
        # A parameter annotated as a tensor and re-bound in the body (``device = device.device``)
        # may no longer be one.
        self.tensors |= self.annotated - self.assigned
        # The nodes each round of the module's fixed point reads again: those that bind a name, and returns.
        self.binding = [n for n in self.nodes if type(n) in BINDING or type(n) is ast.Call and _fills_a_list(n)]
        self.returns = [n for n in self.nodes if type(n) is ast.Return]
        self.mapping_uses: list | None = None  # found once, by ModuleScan.mapping_uses
        self.env: dict[str, Parts] = {}
        self.flows: dict[str, Flow] = {}
        # A function that returns one of its nested functions (a decorator, a factory) keeps
        # that closure's variables alive after the call.
        self.returns_closure = bool(nested & returned)

    def is_local(self, name: str) -> bool:
        """A name that lives and dies with one call: a local or a parameter, or a closure's
        variable from an enclosing call that does not hand the closure out."""
        if self.is_module or name in self.declared_global:
            return False
        if name not in self.declared_nonlocal and (name in self.assigned or name in self.params):
            return True
        scope = self.parent
        while scope is not None:
            if name in scope.assigned or name in scope.params:
                return not scope.returns_closure
            scope = scope.parent
        return False



# The statements that bind a name, as ``ModuleScan._fill_env`` reads them.
BINDING = {ast.Assign, ast.AnnAssign, ast.NamedExpr, ast.AugAssign, ast.For, ast.AsyncFor, ast.comprehension}


def _fills_a_list(call: ast.Call) -> bool:
    """``key_parts.append(id(arg))``."""
    return isinstance(call.func, ast.Attribute) and call.func.attr in FILL_METHODS \
        and isinstance(call.func.value, ast.Name) and bool(call.args)


def _names_in(scope: Scope) -> frozenset:
    """Every name and attribute a function's own nodes mention: what it may call or read a field by."""
    found = set()
    for node in scope.nodes:
        kind = type(node)
        if kind is ast.Name:
            found.add(node.id)
        elif kind is ast.Attribute:
            found.add(node.attr)
    return frozenset(found)


def _enclosing(scope: Scope, module: Scope) -> frozenset:
    """The scopes whose names a function reads besides its own: the functions around it and the module."""
    found, s = {id(module)}, scope.parent
    while s is not None:
        found.add(id(s))
        s = s.parent
    found.discard(id(scope))
    return frozenset(found)


def _env_size(scope: Scope) -> tuple[int, int]:
    """Grows whenever a name of the function gains a part, or a name becomes known as a tensor."""
    return sum(len(parts) + 1 for parts in scope.env.values()), len(scope.tensors)


def _summary_names(scope: Scope) -> set[str]:
    """The names a call to this function is written with (``f``, ``obj.method``, ``Class(...)``)."""
    first, _, last = scope.qualname.rpartition(".")
    return {last, first} if last == "__init__" else {last}



def _keyed_object(step_text: str) -> str:
    """The object whose address or id a flow step reads: ``id(x)``, ``id(f.f_globals)``, ``t.data_ptr()``,
    ``t.untyped_storage().data_ptr()``, ``s._cdata`` -> ``x``, ``f.f_globals``, ``t``, ``t``, ``s``; else ``""``."""
    match = re.fullmatch(r"id\(([\w.]+)\)|([\w.]+?)(?:\.(?:untyped_storage|storage|_typed_storage)\(\))?"
                         r"\.(?:data_ptr\(\)|_cdata)", step_text)
    return (match[1] or match[2]) if match else ""


def _keyed_objects(use) -> set[str]:
    """The objects whose address or id the steps of ``use``'s flow read (``_keyed_object`` of each)."""
    return {obj for t in use.flow if (obj := _keyed_object(t[3]))}


def _kept_by_another(use) -> set[str]:
    """The steps where ``use``'s key is stored in a field of another object than the one whose id it is
    (``id(self)`` stored in ``state.session_id``, then read back): an id kept apart from its object."""
    objects = {obj.partition(".")[0] for obj in _keyed_objects(use)}
    return {t[3] for t in use.flow if t[3].startswith("stored in ") and "." in t[3]
            and t[3][len("stored in "):].partition(".")[0] not in objects}


def _items(value: str) -> set[str]:
    """What a stored value's text holds at its top level: ``(x, v)`` -> ``{"x", "v"}``,
    ``(r, meta['group'])`` -> ``{"r", "meta['group']"}``."""
    try:
        node = ast.parse(value, mode="eval").body
    except SyntaxError:
        return {value.strip()}
    return {ast.unparse(e) for e in node.elts} if isinstance(node, (ast.Tuple, ast.List)) else {ast.unparse(node)}


REMOVING = {"pop", "__delitem__", "discard", "remove", "popitem", "clear"}  # what _removal's text names


def _removal(name: str, owner: str = "", any_entry: bool = False) -> re.Pattern:
    """Text that removes an entry from the mapping ``name`` (``owner.name`` when given): ``.pop``,
    ``.__delitem__``, ``.discard``, ``.remove``, or a subscript (as a ``del`` target); with
    ``any_entry``, ``.popitem`` and ``.clear`` too (they remove entries, not a given one)."""
    prefix = re.escape(f"{owner}.") if owner else r"\b"
    methods = "pop|__delitem__|discard|remove" + ("|popitem|clear" if any_entry else "")
    return re.compile(r"%s%s\s*(?:\.\s*(?:%s)\b|\[)" % (prefix, re.escape(name), methods))


def _deletes(node: ast.AST, removes: re.Pattern) -> bool:
    """``del m[k]`` or ``m.pop(k)`` (``removes`` names the mapping)."""
    if isinstance(node, ast.Delete):
        return any(removes.search(ast.unparse(t)) for t in node.targets)
    return isinstance(node, ast.Call) and bool(removes.search(ast.unparse(node.func)))



def _unsubscripted(node: ast.AST) -> ast.AST:
    """``self._last[0][1]`` -> ``self._last``."""
    while isinstance(node, ast.Subscript):
        node = node.value
    return node


def _makes_a_ctypes_pointer(call: ast.Call) -> bool:
    """``c_void_p(x)``, ``ctypes.cast(p, ctypes.c_void_p)``: its ``.value`` is an address."""
    name = last_name(call.func)
    return name in CTYPES_POINTERS or name == "cast" and len(call.args) == 2 and last_name(call.args[1]) in CTYPES_POINTERS


def _kept_beyond_the_call(node: ast.AST, scope) -> bool:
    """Is ``node`` (``self._last``, ``Cache._last[0]``, a global) kept beyond the call, by itself?"""
    node = _unsubscripted(node)
    return isinstance(node, ast.Attribute) or isinstance(node, ast.Name) and not scope.is_local(node.id)


def _of_now(node: ast.AST, scope) -> bool:
    """Is ``node`` a value of now (a call's result, a local), not a kept one (``other.key``, a field) or
    one made of kept ones (``self.storage_ptr + self.storage_size``)?"""
    node = _unsubscripted(node)
    if isinstance(node, ast.Call):
        return True
    if isinstance(node, ast.Name):
        return scope.is_local(node.id)
    return not isinstance(node, ast.Attribute) and any(_of_now(n, scope) for n in ast.iter_child_nodes(node))


def _last_part(node: ast.AST) -> str:
    """``self._cache[0]`` -> ``_cache``; ``_last`` -> ``_last``; else ``""``."""
    node = _unsubscripted(node)
    return node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else ""


def _held_in(holder: ast.AST, cls: str) -> str:
    """Where a remembered value is kept, one name for every way a class's code reaches it:
    ``self._last[0]`` and ``Cache._last`` (in class ``Cache``) -> ``self._last``."""
    text = ast.unparse(_unsubscripted(holder))
    return f"self.{text.partition('.')[2]}" if cls and text.startswith(f"{cls}.") else text


def _key_put_into(node: ast.AST, name: str) -> ast.AST | None:
    """The key ``node`` puts into the mapping ``name`` (``name.add(k)``, ``name[k] = v``, ...), else None."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args \
            and node.func.attr in ("add", "append", "setdefault", "__setitem__") and dotted(node.func.value) == name:
        return node.args[0]
    if isinstance(node, ast.Assign):
        return next((t.slice for t in node.targets if isinstance(t, ast.Subscript) and dotted(t.value) == name), None)
    return None


def _removes_key(node: ast.AST, removes: re.Pattern, keys: set[str]) -> bool:
    """``node`` removes one of ``keys`` (their text) from the mapping ``removes`` names, or every entry."""
    if not _deletes(node, removes):
        return False
    if isinstance(node, ast.Delete):
        return any(isinstance(t, ast.Subscript) and ast.unparse(t.slice) in keys for t in node.targets)
    return last_name(node.func) == "clear" or bool(node.args) and ast.unparse(node.args[0]) in keys


def _callbacks(call: ast.Call, weakref_names: set[str]) -> list[ast.AST]:
    """What a ``weakref.finalize(obj, func, *args)`` or ``ref(obj, callback)`` call (``weakref_names``:
    weak reference classes, a module's subclasses too) runs when obj dies."""
    name = last_name(call.func)
    return call.args[1:] if name == "finalize" else [call.args[1]] if name in weakref_names else []



def _put_into(node: ast.AST, attr: str) -> ast.AST | None:
    """The key or member put into ``self.<attr>`` by ``node`` (``.append/.add/.insert/.setdefault`` or
    ``self.<attr>[key] = v``), else None."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args \
            and node.func.attr in ("append", "add", "insert", "setdefault") and dotted(node.func.value) == f"self.{attr}":
        return node.args[-1] if node.func.attr == "insert" else node.args[0]
    if isinstance(node, ast.Assign):
        for t in node.targets:
            if isinstance(t, ast.Subscript) and dotted(t.value) == f"self.{attr}":
                return t.slice
    return None


def _kept_in_field(node: ast.AST, obj: str, attr: str, every: bool = False) -> str:
    """The other field of ``self`` that ``node`` keeps ``obj`` in (``self._params.append(obj)``,
    ``self._params[k] = obj``, ``self._last = obj``), else ``""``. ``every``: only a field that keeps
    every object put in it (``self._last = obj`` keeps one, and the next call lets it go)."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
            and node.func.attr in ("append", "add", "insert") and any(ast.unparse(a) == obj for a in node.args):
        field = dotted(node.func.value)
    elif isinstance(node, ast.Assign) and ast.unparse(node.value) == obj and len(node.targets) == 1 \
            and (not every or isinstance(node.targets[0], ast.Subscript)):
        target = node.targets[0]
        field = dotted(target.value if isinstance(target, ast.Subscript) else target)
    else:
        return ""
    name = field.partition(".")[2] if field.startswith("self.") else ""
    return name if name and name != attr else ""


def _field_keeping(fn: ast.AST, obj: str, attr: str) -> str:
    """The other field of ``self`` that ``fn`` keeps ``obj`` in, one that keeps every object put in it
    (``_kept_in_field`` with ``every``), else ``""``."""
    return next((h for n in walk(fn) if (h := _kept_in_field(n, obj, attr, every=True))), "")


def _keys_put_at(fn: ast.AST, line: int, mapping: str) -> set[str]:
    """The text of each key the statement of ``fn`` at ``line`` puts into ``mapping``."""
    return {ast.unparse(k) for n in walk(fn) if getattr(n, "lineno", 0) == line
            and (k := _key_put_into(n, mapping)) is not None}


def _module_of(mapping: str, module: str) -> str:
    """Whose a table outside any class is, as pinned tables are told apart: ``trace_rules._ids`` ->
    ``module trace_rules``; ``_ids`` in ``torch._dynamo.trace_rules`` -> the same. (A global of one
    module does not vouch for a global of the same name in another.)"""
    prefix = mapping.rpartition(".")[0] or module
    return f"module {prefix.rpartition('.')[2]}"


def _positional(fn: ast.AST) -> list[str]:
    """The names of a function's positional parameters (``self`` first, for a method)."""
    args = getattr(fn, "args", None)
    return [a.arg for a in args.posonlyargs + args.args] if isinstance(args, ast.arguments) else []


def _iterated(fn: ast.AST, obj: str) -> str:
    """What ``obj`` is an element of where ``fn`` binds it in a loop or comprehension: ``xs`` for
    ``for obj in xs`` and ``for obj, f in zip(xs, fs)``; else ``""``."""
    for node in walk(fn):
        if not isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
            continue
        names = node.target.elts if isinstance(node.target, ast.Tuple) else [node.target]
        position = next((i for i, n in enumerate(names) if isinstance(n, ast.Name) and n.id == obj), None)
        if position is None:
            continue
        source = node.iter
        if isinstance(node.target, ast.Tuple):
            if not (isinstance(source, ast.Call) and last_name(source.func) == "zip" and position < len(source.args)):
                return ""
            source = source.args[position]
        return ast.unparse(source)
    return ""


def _collection_kept_with(fn: ast.AST, obj: str, attr: str) -> str:
    """The other field of ``self`` that keeps every element ``obj`` runs over, bound in ``fn`` beside
    ``self.<attr>`` itself (``self._scatter = list(xs)`` and ``self._by_id = {id(x): f for x in xs}``:
    both bound anew together, so no id outlives the collection that holds its object), else ``""``."""
    collection = _iterated(fn, obj)
    if not collection or not any(_binds(n, f"self.{attr}") for n in walk(fn)):
        return ""
    for node in walk(fn):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and dotted(node.targets[0]).startswith("self."):
            value = node.value
            if isinstance(value, ast.Call) and last_name(value.func) in ("list", "tuple", "set", "frozenset") \
                    and len(value.args) == 1:
                value = value.args[0]
            field = dotted(node.targets[0]).partition(".")[2]
            if ast.unparse(value) == collection and field != attr:
                return field
    return ""


def _membership_guards(fn: ast.AST, line: int, keys: set[str]) -> list[str]:
    """The tables that the statement at ``line`` of ``fn`` runs only when one of ``keys`` is in:
    ``assert k in t`` before it, or an ``if`` (``if k in t and ...:``) whose body holds it."""
    def members(test: ast.AST) -> list[str]:
        tests = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) else [test]
        found = []
        for t in tests:
            if isinstance(t, ast.Compare) and len(t.ops) == 1 and isinstance(t.ops[0], ast.In) \
                    and ast.unparse(t.left) in keys:
                table = t.comparators[0]
                if isinstance(table, ast.Call) and last_name(table.func) == "keys" and not table.args:
                    table = table.func.value
                found.append(dotted(table))
        return found
    tables = []
    for node in walk(fn):
        if isinstance(node, ast.Assert) and node.lineno < line:
            tables += members(node.test)
        elif isinstance(node, ast.If) and any(b.lineno <= line <= (b.end_lineno or b.lineno) for b in node.body):
            tables += members(node.test)
    return [t for t in tables if t]


def _ids_named(fn: ast.AST, value: str) -> set[str]:
    """The objects whose ``id()`` a kept value's text names, itself or through a local of ``fn`` it
    names (``(key, r)`` with ``key = (id(r), id(s))`` -> ``r``, ``s``): a flow follows one of them."""
    try:
        names = {n.id for n in walk(ast.parse(value, mode="eval")) if isinstance(n, ast.Name)}
    except SyntaxError:
        return set()
    texts = [value] + [ast.unparse(n.value) for n in walk(fn) if isinstance(n, ast.Assign)
                       and any(isinstance(t, ast.Name) and t.id in names for t in n.targets)]
    return {m for text in texts for m in re.findall(r"\bid\(([\w.]+)\)", text)}


def _target_names(target: ast.AST) -> list[str]:
    """The names a loop binds: ``(key, sid), r`` -> ``key``, ``sid``, ``r``."""
    return [n.id for n in walk(target) if isinstance(n, ast.Name)]


def _iterated_from_a_field(fn: ast.AST, obj: str, attr: str) -> str:
    """The other field of ``self`` whose elements ``obj`` runs over where ``fn`` takes its id: ``for rm in
    self._resources`` or through a copy made in ``fn`` (``L = list(self._resources)``; ``for rm in L``),
    else ``""``. The object is in that field when its id is put; that it stays there as long as the id
    is for ``_dropped_together`` to say."""
    collection = _iterated(fn, obj)
    if not collection:
        return ""
    binds = [n.value for n in walk(fn) if isinstance(n, ast.Assign) and len(n.targets) == 1
             and isinstance(n.targets[0], ast.Name) and n.targets[0].id == collection]
    if binds:
        if len(binds) != 1:
            return ""
        value = binds[0]
        if isinstance(value, ast.Call) and last_name(value.func) in ("list", "tuple", "sorted") \
                and len(value.args) == 1:
            value = value.args[0]
        collection = dotted(value)
    field = collection.partition(".")[2] if collection.startswith("self.") else ""
    return field if field and "." not in field and field != attr else ""


def _binds(node: ast.AST, field: str) -> bool:
    """``self._params = []``: ``node`` binds ``field`` anew (what it held before may go)."""
    targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
    return any(dotted(t) == field for target in targets
               for t in (target.elts if isinstance(target, ast.Tuple) else [target]))


def _tries_guarding(fn: ast.AST, line: int) -> list[ast.Try]:
    """The ``try`` statements of ``fn`` whose ``finally`` runs whenever the statement at ``line`` has:
    it is in the ``try`` body, or it is the statement just before the ``try`` (``s.add(k)``, then
    ``try: ... finally: s.discard(k)``). A put after the ``try``, or before it with other statements
    between (a ``return`` there leaves the entry), is not guarded."""
    def spans(stmt):
        return stmt.lineno <= line <= (stmt.end_lineno or stmt.lineno)
    guarding = []
    for block in (b for n in walk(fn) for b in (getattr(n, "body", None), getattr(n, "orelse", None))
                  if isinstance(b, list)):
        for i, stmt in enumerate(block):
            if isinstance(stmt, ast.Try) and stmt.finalbody and (
                    any(spans(b) for b in stmt.body) or i and spans(block[i - 1])):
                guarding.append(stmt)
    return guarding


def _keeps(fn: ast.AST, name: str, cls: ast.ClassDef, hops: int = 1) -> bool:
    """Does method ``fn`` of ``cls`` keep its parameter ``name`` in a field of ``self``: itself, or each
    element where ``name`` is a list of them (``for t in name: self.tensors.append(t)``), or by handing
    it (alone or in a list) to another method of ``cls`` that does (``self._add_tensors([name])``)?"""
    elements = {n.target.id for n in walk(fn) if isinstance(n, ast.For) and isinstance(n.target, ast.Name)
                and ast.unparse(n.iter) == name}
    if any(_kept_in_field(n, held, "") for n in walk(fn) for held in {name, *elements}):
        return True
    if hops == 0:
        return False
    methods = {m.name: m for m in cls.body if isinstance(m, ast.FunctionDef)}
    for call in (n for n in walk(fn) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)):
        method = methods.get(call.func.attr) if dotted(call.func.value) == "self" else None
        params = [a.arg for a in method.args.args][1:] if method else []
        for param, arg in zip(params, call.args):
            handed = ast.unparse(arg.elts[0]) if isinstance(arg, (ast.List, ast.Tuple)) and len(arg.elts) == 1 \
                else ast.unparse(arg)
            if handed == name and _keeps(method, param, cls, hops - 1):
                return True
    return False


def _fresh(value: ast.AST) -> bool:
    """A value made anew on each call: a literal container or a container's constructor."""
    if isinstance(value, (ast.Dict, ast.Set, ast.List, ast.DictComp, ast.SetComp, ast.ListComp, ast.Tuple,
                          ast.Constant)):
        return True
    return isinstance(value, ast.Call) and last_name(value.func) in FRESH_CONTAINERS


class ModuleScan:
    """The flow model applied to one parsed module, with the summaries of the modules it imports."""

    def __init__(self, tree: ast.Module, path: str, module: str, imported: dict[str, Summary] | None = None,
                 fields: dict[tuple[str, str], tuple[Parts, Flow]] | None = None,
                 pinned: frozenset | None = None):
        self.path = path
        self.module = module
        self.findings: list[Finding] = []
        self.summaries: dict[str, Summary] = dict(imported or {})  # callee name as written here -> summary
        self.fields: dict[tuple[str, str], tuple[Parts, Flow]] = dict(fields or {})  # (class, attr) -> value
        self.written_fields: set[tuple[str, str]] = set()  # the fields this module writes
        self.key_classes: dict[str, KeyClass] = {}
        self.used_key_classes: set[str] = set()
        self.scopes: list[Scope] = [Scope(tree, None, is_module=True)]
        self.classes: dict[str, ast.ClassDef] = {}
        self.functions: list[tuple[ast.AST, ast.ClassDef | None]] = []  # (function, its class)
        self.assignments: list[ast.AST] = []
        self.functools_cache = False  # ``from functools import cache``
        self.module_names: set[str] = set()  # names bound by ``import x`` / ``import x.y as z``
        self.compared: set[str] = set()  # names (a field's last part) compared with == or != here (ARH005)
        self._collect(tree, self.scopes[0], None)
        for scope in self.scopes:
            scope.finish()
            if scope.qualname:
                self.summaries[scope.qualname] = scope.summary
        self.methods: dict[str, list[str]] = {}  # method name -> "Class.method" of this module's classes
        for scope in self.scopes:
            if scope.cls is not None and scope.qualname:
                self.methods.setdefault(scope.qualname.rpartition(".")[2], []).append(scope.qualname)
        self.weakref_names = set(WEAKREF_NAMES) | {
            name for name, c in self.classes.items() if any(last_name(b) in WEAKREF_NAMES for b in c.bases)}
        self.constructors = self._mapping_constructors()
        self.constructor_kinds: dict[str, set[str]] = {}  # attribute name -> the kinds of mapping made for it
        for target, kind in self.constructors.items():
            self.constructor_kinds.setdefault(target.rpartition(".")[2], set()).add(kind)
        self._facts: dict[int, tuple] = {}
        self._names_used: dict[str, list[ast.AST]] | None = None
        self.uses: list[Use] = []
        self._guards_memo: dict[tuple, dict[str, bool]] = {}
        self.pinned: set[tuple[str, str]] = set(pinned or ())  # (class, attr) of mappings holding their id()'s object
        self.pinned_sources: set[Step] = set()
        self.wants: set[str] = set()  # functions called with an address that this module does not define

    def _collect(self, root: ast.AST, scope: Scope, cls: ast.ClassDef | None) -> None:
        """One walk over the module: each node goes to the scope (function) it belongs to."""
        bodies = [(root, scope, cls)]  # the module, then each function and class met on the way
        while bodies:
            root, scope, cls = bodies.pop()
            stack = child_nodes(root)
            while stack:
                node = stack.pop()
                scope.nodes.append(node)
                kind = type(node)
                if kind is ast.FunctionDef or kind is ast.AsyncFunctionDef:
                    outer = scope.parent if isinstance(scope.node, ast.ClassDef) else scope  # no closure over a class
                    outer = None if outer is None or outer.is_module else outer
                    self.functions.append((node, cls))
                    inner = Scope(node, cls if isinstance(scope.node, ast.ClassDef) else None, outer)
                    self.scopes.append(inner)
                    bodies.append((node, inner, cls))
                    stack.extend(node.decorator_list)
                    continue
                if kind is ast.ClassDef:
                    self.classes[node.name] = node
                    # Class-level statements are not analysed as a scope; its methods close over
                    # the function around the class, if any.
                    body = Scope(node, node, None if scope.is_module or isinstance(scope.node, ast.ClassDef)
                                 else scope)
                    bodies.append((node, body, node))
                    continue
                if kind is ast.Assign or kind is ast.AnnAssign:
                    self.assignments.append(node)
                elif kind is ast.ImportFrom and node.module == "functools":
                    self.functools_cache |= any(a.name == "cache" for a in node.names)
                elif kind is ast.Import:
                    self.module_names.update(a.asname or a.name.partition(".")[0] for a in node.names)
                elif kind is ast.Compare and len(node.ops) == 1 and isinstance(node.ops[0], (ast.Eq, ast.NotEq)):
                    self.compared.update(_last_part(side) for side in (node.left, node.comparators[0]))
                elif kind is ast.For or kind is ast.comprehension:  # name -> what each loop binding it runs over
                    for name in _target_names(node.target):
                        scope.loop_iters.setdefault(name, []).append(node.iter)
                stack.extend(child_nodes(node))

    def step(self, node: ast.AST, text: str) -> Step:
        return (self.path, getattr(node, "lineno", 0), getattr(node, "col_offset", -1) + 1, text)

    # -- what values are made of, and the way they came -------------------------------------------

    @staticmethod
    def join(values) -> tuple[Parts, Flow]:
        """Parts of all; the flow of the first that holds an address, else of the first that holds anything."""
        parts, flow, best = Parts(), (), 0
        for p, f in values:
            if not p:
                continue
            parts = parts | p
            rank = 2 if is_address(p) else 1
            if rank > best and f:
                flow, best = f, rank
        return parts, flow

    def value(self, node: ast.AST, scope: Scope) -> tuple[Parts, Flow]:
        """What the value of ``node`` is made of, as far as a key is concerned, and where it came from."""
        kind = type(node)
        if kind is ast.Name:
            return self._name_value(node.id, scope)
        if kind is ast.Call:
            return self._call_value(node, scope)
        if kind is ast.Attribute:
            return self._attribute_value(node, scope)
        if kind is ast.Constant:
            return Parts(), ()
        if kind is ast.Subscript:
            inner = node.value
            if isinstance(inner, ast.Attribute) and inner.attr in ARRAY_INTERFACES:
                return Parts({("address", f"{inner.attr}['data']")}), (self.step(node, ast.unparse(node)),)
            return self.value(inner, scope)  # an element of a container holds what the container holds
        children: list[ast.AST] = []
        if kind is ast.Tuple or kind is ast.List or kind is ast.Set:
            children = node.elts
        elif kind is ast.BinOp:
            children = [node.left, node.right]
        elif kind is ast.JoinedStr:
            children = [v.value for v in node.values if isinstance(v, ast.FormattedValue)]
        elif kind is ast.FormattedValue or kind is ast.Starred or kind is ast.NamedExpr or kind is ast.Await:
            children = [node.value]
        elif kind is ast.IfExp:
            children = [node.body, node.orelse]
        elif kind is ast.BoolOp:
            children = node.values
        elif kind is ast.GeneratorExp or kind is ast.ListComp or kind is ast.SetComp:
            children = [node.elt]
        elif kind is ast.Lambda:
            children = [node.body]
        return self.join(self.value(c, scope) for c in children)

    def _name_value(self, name: str, scope: Scope) -> tuple[Parts, Flow]:
        s: Scope | None = scope
        while s is not None:
            if name in s.env:
                return s.env[name], s.flows.get(name, ())
            if name in s.assigned or name in s.params:
                return Parts(), ()
            s = s.parent
        module = self.scopes[0]
        return module.env.get(name, Parts()), module.flows.get(name, ())

    def receiver_class(self, node: ast.AST, scope: Scope) -> str:
        """The class of ``node`` when it is known: ``self``, an annotated name, ``x = Class(...)``."""
        if isinstance(node, ast.Name):
            s: Scope | None = scope
            while s is not None:
                if node.id in s.types:
                    return s.types[node.id]
                s = s.parent
        return ""

    @staticmethod
    def _is_ctypes_pointer(name: str, scope: Scope) -> bool:
        s: Scope | None = scope
        while s is not None:
            if name in s.aliases:
                return any(isinstance(v, ast.Call) and last_name(v.func) in CTYPES_POINTERS for v in s.aliases[name])
            s = s.parent
        return False

    def _class_and_bases(self, name: str) -> list[str]:
        names, todo = [], [name]
        while todo and len(names) < 8:
            current = todo.pop()
            if current and current not in names:
                names.append(current)
                if current in self.classes:
                    todo += [last_name(b) for b in self.classes[current].bases]
        return names

    def _attribute_value(self, node: ast.Attribute, scope: Scope) -> tuple[Parts, Flow]:
        attr = node.attr
        if attr == "_cdata":
            return Parts({("object address", "_cdata")}), (self.step(node, ast.unparse(node)),)
        if attr == "_version":
            return Parts({("version", "_version")}), ()
        if attr in LAYOUT_ATTRS:
            return Parts({("layout", attr)}), ()
        if attr == "value" and (isinstance(node.value, ast.Name) and self._is_ctypes_pointer(node.value.id, scope)
                                or isinstance(node.value, ast.Call) and _makes_a_ctypes_pointer(node.value)):
            return Parts({("address", "ctypes pointer .value")}), (self.step(node, ast.unparse(node)),)
        if not self.fields_by_attr.get(attr):
            return Parts(), ()
        cls = self.receiver_class(node.value, scope)
        # A receiver of unknown class reads the field of any class of this module that fills it; a field
        # filled through a receiver of unknown class (``("", attr)``) is this module's guess, read here
        # only: another module's ``current_thread().name = f"{id(p)}"`` says nothing of ``self.name``.
        keys = [(c, attr) for c in self._class_and_bases(cls)] + [("", attr)] * (("", attr) in self.written_fields) \
            if cls else [k for k in self.fields_by_attr[attr] if k in self.written_fields]
        parts, flow = self.join(self.fields.get(k, (Parts(), ())) for k in keys)
        if parts and flow:
            flow = flow + (self.step(node, f"read as {ast.unparse(node)}"),)
        return parts, flow

    def callees(self, call: ast.Call, scope: Scope) -> list[Summary]:
        """The functions a call may reach, resolved by name: this module's, then the imported ones."""
        func = call.func
        if isinstance(func, ast.Name):
            name = func.id
            if name in self.summaries:
                return [self.summaries[name]]
            init = self.summaries.get(f"{name}.__init__")
            return [init] if init else []
        if not isinstance(func, ast.Attribute):
            return []
        text = dotted(func)
        if text in self.summaries:  # module.function, Class.method
            return [self.summaries[text]]
        cls = self.receiver_class(func.value, scope)
        if cls:
            for c in self._class_and_bases(cls):
                if f"{c}.{func.attr}" in self.summaries:
                    return [self.summaries[f"{c}.{func.attr}"]]
            if cls in self.classes or f"{cls}.__init__" in self.summaries:
                return []  # a known class without that method: not some other class's
        if not isinstance(func.value, (ast.Name, ast.Attribute)):
            return []  # ``d.setdefault(k, {}).get(key)``: a method of what a mapping holds, not of a class here
        own = [self.summaries[q] for q in self.methods.get(func.attr, ())]
        elsewhere = self.summaries.get(f"{UNIQUE_METHOD}{func.attr}")
        root = func.value
        while isinstance(root, ast.Attribute):
            root = root.value
        if own or not elsewhere or (isinstance(root, ast.Name) and root.id in self.module_names):
            return own  # ``re.search(...)``: a function of an imported module, not a method of the package
        return [elsewhere]

    @staticmethod
    def bind(call: ast.Call, summary: Summary) -> dict[str, ast.AST]:
        bound = {}
        for name, arg in zip(summary.params, call.args):
            if isinstance(arg, ast.Starred):
                break
            bound[name] = arg
        for kw in call.keywords:
            if kw.arg:
                bound[kw.arg] = kw.value
        return bound

    def _call_value(self, call: ast.Call, scope: Scope) -> tuple[Parts, Flow]:
        func = call.func
        if isinstance(func, ast.Attribute):
            if func.attr == "data_ptr":
                inner = func.value
                if isinstance(inner, ast.Call) and isinstance(inner.func, ast.Attribute) \
                        and inner.func.attr in STORAGE_METHODS:
                    return Parts({("storage address", f"{inner.func.attr}().data_ptr()")}), \
                        (self.step(call, ast.unparse(call)),)
                return Parts({("address", "data_ptr()")}), (self.step(call, ast.unparse(call)),)
            if func.attr in LAYOUT_METHODS:
                return Parts({("layout", f"{func.attr}()")}), ()
            if func.attr == "addressof":
                return Parts({("address", "ctypes.addressof()")}), (self.step(call, ast.unparse(call)),)
            if func.attr in ("format", "join"):
                return self.join(self.value(a, scope) for a in [*call.args, *(k.value for k in call.keywords)])
        elif isinstance(func, ast.Name):
            name = func.id
            if name == "id" and len(call.args) == 1:
                return Parts({("identity", "id()")}), (self.step(call, ast.unparse(call)),)
            if name == "addressof":
                return Parts({("address", "ctypes.addressof()")}), (self.step(call, ast.unparse(call)),)
            if name in self.key_classes:
                parts, flow = self.join(self.value(a, scope) for a in call.args)
                return Parts({("key class", name)}) | self.key_classes[name].parts, \
                    flow + (self.step(call, f"held by {name}(...)"),) if flow else ()
            if name in TRANSPARENT_CALLS:
                return self.join(self.value(a, scope) for a in call.args)
        if last_name(func) in MAP_CALLS and call.args:
            return self._callback_value(call, scope)
        results = []
        for summary in self.callees(call, scope):
            own = without_params(summary.returns)
            if own:
                results.append((own, summary.returns_flow + (self.step(call, f"returned by {ast.unparse(func)}()"),)))
            bound = self.bind(call, summary)
            for p in params_in(summary.returns):
                if p in bound:
                    parts, flow = self.value(bound[p], scope)
                    results.append((parts, flow + (self.step(call, f"through {ast.unparse(func)}()"),) if flow
                                    else ()))
        if isinstance(func, ast.Attribute) and func.attr not in MAPPING_METHODS:
            parts, flow = self.value(func.value, scope)  # ``key.encode()``, ``str(ptr).zfill(16)``
            if is_address(parts):
                results.append((parts, flow))
        return self.join(results)

    def _callback_value(self, call: ast.Call, scope: Scope) -> tuple[Parts, Flow]:
        """``map(id, params)``, ``tree_map(lambda t: t.data_ptr(), x)``: what the callback returns."""
        fn = call.args[0]
        here = self.step(call, f"returned by the callback of {last_name(call.func)}()")
        if isinstance(fn, ast.Lambda):
            parts, flow = self.value(fn.body, scope)
            return (without_params(parts), flow + (here,)) if is_address(parts) else (Parts(), ())
        if isinstance(fn, ast.Name) and fn.id == "id":
            return Parts({("identity", "id()")}), (self.step(call, ast.unparse(call)),)
        if isinstance(fn, ast.Attribute) and fn.attr == "data_ptr":
            return Parts({("address", "data_ptr()")}), (self.step(call, ast.unparse(call)),)
        if isinstance(fn, (ast.Name, ast.Attribute)):
            fake = ast.Call(func=fn, args=[], keywords=[])
            ast.copy_location(fake, call)
            found = [(without_params(s.returns), s.returns_flow + (here,)) for s in self.callees(fake, scope)
                     if is_address(s.returns)]
            return self.join(found)
        return Parts(), ()

    def is_tensor(self, node: ast.AST, scope: Scope) -> bool:
        if isinstance(node, ast.Name):
            return node.id in scope.tensors
        if isinstance(node, ast.Call):
            name = dotted(node.func)
            return name.startswith("torch.") and name.rsplit(".", 1)[-1] in TENSOR_CONSTRUCTORS
        return False

    # -- the fixed point -----------------------------------------------------------------------------

    def _bind_name(self, scope: Scope, name: str, parts: Parts, flow: Flow, at: ast.AST) -> None:
        if not parts:
            return
        old = scope.env.get(name, Parts())
        if parts <= old:
            return
        scope.env[name] = old | parts
        if flow and (name not in scope.flows or (is_address(parts) and not is_address(old))):
            scope.flows[name] = flow + (self.step(at, f"assigned to {name}"),)

    def _write_field(self, key: tuple[str, str], parts: Parts, flow: Flow) -> None:
        parts = without_params(parts)
        if not is_address(parts):
            return
        old_parts, old_flow = self.fields.get(key, (Parts(), ()))
        if parts <= old_parts:
            return
        self.fields[key] = (old_parts | parts, old_flow or flow)
        self.written_fields.add(key)
        self.fields_by_attr.setdefault(key[1], [])
        if key not in self.fields_by_attr[key[1]]:
            self.fields_by_attr[key[1]].append(key)

    def _assign(self, scope: Scope, target: ast.AST, value: ast.AST, at: ast.AST) -> None:
        if isinstance(target, (ast.Tuple, ast.List)):
            if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts):
                for t, v in zip(target.elts, value.elts):
                    self._assign(scope, t, v, at)
                return
            for t in target.elts:  # unpacking: each name may hold any part
                self._assign(scope, t, value, at)
            return
        if isinstance(target, ast.Starred):
            target = target.value
        parts, flow = self.value(value, scope)
        if isinstance(target, ast.Name):
            self._bind_name(scope, target.id, parts, flow, at)
            if not parts and isinstance(value, ast.Call) and self.is_tensor(value, scope):
                scope.tensors.add(target.id)
        elif isinstance(target, ast.Attribute) and parts:
            cls = self.receiver_class(target.value, scope)
            key = (cls, target.attr)
            self._write_field(key, parts, flow + (self.step(at, f"stored in {ast.unparse(target)}"),))
            for p in params_in(parts):
                scope.summary.field_params.setdefault(p, set()).add(key)

    def _fill_env(self, scope: Scope) -> None:
        if scope.qualname:
            for p in scope.params:
                if p not in scope.env:
                    scope.env[p] = Parts({(PARAM, p)})
                    scope.flows[p] = (self.step(scope.node, f"parameter {p} of {scope.qualname}()"),)
        for node in scope.binding:
            kind = type(node)
            if kind is ast.Assign:
                for target in node.targets:
                    self._assign(scope, target, node.value, node)
            elif (kind is ast.AnnAssign or kind is ast.NamedExpr) and node.value is not None:
                self._assign(scope, node.target, node.value, node)
            elif kind is ast.AugAssign:
                self._assign(scope, node.target, ast.Tuple(elts=[node.target, node.value], ctx=ast.Load()), node)
            elif kind is ast.Call:
                # ``key_parts.append(id(arg))``: the list holds what is appended (a caller's list, too)
                target = node.func.value.id
                parts, flow = self.join(self.value(a, scope) for a in node.args)
                parts = without_params(parts)
                if is_address(parts):
                    self._bind_name(scope, target, parts, flow + (self.step(node, f"appended to {target}"),), node)
                    if target in scope.params and target not in scope.summary.filled_params:
                        scope.summary.filled_params[target] = (parts, scope.flows.get(target, flow))
            elif kind is ast.For or kind is ast.AsyncFor or kind is ast.comprehension:
                self._assign(scope, node.target, node.iter, node if kind is not ast.comprehension else node.iter)

    def _summarise(self, scope: Scope) -> None:
        returned = [self.value(n.value, scope) for n in scope.returns if n.value]
        parts, flow = self.join(returned)
        summary = scope.summary
        if not summary.returns_persistent:
            summary.returns_persistent = any(
                isinstance(n.value, (ast.Name, ast.Attribute, ast.Subscript))
                and self.lifetime(n.value, scope) == "persistent" for n in scope.returns) \
                or any(self._is_functools_cache(d) for d in scope.node.decorator_list)
        if parts - summary.returns:
            summary.returns = summary.returns | parts
            if is_address(parts) and not summary.returns_flow:
                summary.returns_flow = flow

    def resolve(self) -> None:
        """Names, fields, summaries and key classes, until nothing changes. A round after the first
        reads again only the functions whose inputs changed in the last one (their own names, an
        enclosing function's or the module's, a field they read, a function they call, a key class):
        the others would give what they gave, and most functions of a large module hold no address."""
        self.fields_by_attr: dict[str, list] = {}
        for key in self.fields:
            self.fields_by_attr.setdefault(key[1], []).append(key)
        scopes = self.scopes
        names = [_names_in(s) for s in scopes]
        outer = [_enclosing(s, scopes[0]) for s in scopes]
        uses: list[list[Use]] = [[] for _ in scopes]
        todo = range(len(scopes))
        state = self._state()
        for _ in range(MAX_ROUNDS):
            before = state
            sizes = [_env_size(s) for s in scopes]
            fields = {k: v[0] for k, v in self.fields.items()}
            key_classes = {k: v.parts for k, v in self.key_classes.items()}
            for i in todo:
                self._fill_env(scopes[i])
            for i in todo:
                scope = scopes[i]
                self.uses = []
                if scope.qualname:
                    self._summarise(scope)
                self._calls_and_uses(scope)
                uses[i] = self.uses
            for name, cls in self.classes.items():
                held = Parts().union(*(self.fields[k][0] for k in self.fields if k[0] == name))
                hashes = next((n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "__hash__"), None)
                if hashes is not None:  # ``hash(ctypes.cast(self._ptr, c_void_p).value)``: an address made there
                    # (not ``id(self)``: an object that hashes by its own identity is alive while it is a key)
                    returned = next((s.summary.returns for s in scopes if s.node is hashes), Parts())
                    held |= {part for part in returned if part[0] == "address"}
                if hashes is not None and is_address(held):
                    self.key_classes[name] = KeyClass(cls, held, self._uses_weakref([cls]))
            state = self._state()
            if state == before:
                break
            grown = {id(s) for s, size in zip(scopes, sizes) if _env_size(s) != size}
            attrs = {k[1] for k, v in self.fields.items() if fields.get(k) != v[0]}
            called = set().union(*(_summary_names(s) for s, old, new in zip(scopes, before[1], state[1])
                                   if old != new))
            if {k: v.parts for k, v in self.key_classes.items()} != key_classes:
                todo = range(len(scopes))
            else:
                todo = [i for i, s in enumerate(scopes)
                        if id(s) in grown or not grown.isdisjoint(outer[i]) or not names[i].isdisjoint(attrs | called)]
        self.uses = [u for found in uses for u in found]

    def _state(self):
        return (sum(len(s.env) + sum(map(len, s.env.values())) for s in self.scopes),
                [s.summary.state() for s in self.scopes], {k: v[0] for k, v in self.fields.items()},
                set(self.key_classes))

    # -- where keys reach mappings -------------------------------------------------------------------

    def lifetime(self, mapping: ast.AST, scope: Scope, seen: frozenset = frozenset()) -> str:
        """``persistent`` (outlives the call), ``local``, or ``param:NAME`` (the caller's mapping)."""
        root = _unsubscripted(mapping)
        if isinstance(root, ast.Name):
            name = root.id
            if not scope.is_local(name):
                return "persistent"
            if name in scope.params and name not in scope.assigned:
                return f"param:{name}"
            bound = scope.aliases.get(name, [])
            if name not in seen and any(
                    self.lifetime(v, scope, seen | {name}) == "persistent" if not isinstance(v, ast.Name)
                    else not scope.is_local(v.id) for v in bound):
                return "persistent"  # an alias of a field, a global, or a getter's result (on some path)
            return "local"
        if isinstance(root, ast.Attribute):
            return "persistent"
        if isinstance(root, ast.Call):
            func = root.func
            if isinstance(func, ast.Attribute) and func.attr in ("get", "setdefault", "pop") and root.args:
                return self.lifetime(func.value, scope, seen)  # a mapping nested in another lives as long
            # ``_active.get()`` on a module-level ContextVar or holder: what it hands out lasts with it.
            held = isinstance(func, ast.Attribute) and func.attr == "get" and not root.args \
                and self.lifetime(func.value, scope, seen) == "persistent"
            getter = held or (not _fresh(root) and any(s.returns_persistent for s in self.callees(root, scope)))
            return "persistent" if getter else "local"
        return "local"

    def mapping_uses(self, scope: Scope) -> list[tuple]:
        """(mapping node, key node, how it is used, the node to report, stored value) for every use with a
        key. They depend on the function's nodes alone: found once, read in every round."""
        if scope.mapping_uses is None:
            scope.mapping_uses = list(self._find_mapping_uses(scope))
        return scope.mapping_uses

    @functools.cached_property
    def appends(self) -> dict[str, list[tuple]]:
        """``x.append(v)`` calls of the module by what they append to (``self._stack``): (the innermost
        function, its class, the call). Found once per module."""
        found: dict[str, list[tuple]] = {}
        for fn, cls in self.functions:
            for n in self.scope_of[id(fn)].nodes:
                if type(n) is ast.Call and isinstance(n.func, ast.Attribute) and n.func.attr == "append" and n.args:
                    found.setdefault(dotted(n.func.value), []).append((fn, cls, n))
        return found

    @functools.cached_property
    def scope_of(self) -> dict[int, Scope]:
        """Each function's (and the module's) scope, by ``id()`` of its node."""
        return {id(s.node): s for s in self.scopes}

    @functools.cached_property
    def searched_lists(self) -> set[str]:
        """Lists run over by a loop whose variable is compared with ``==``/``!=`` (last parts): the entries
        of an association list (``for (key, sender_id), r in self.receivers: if sender_id == now:``)."""
        return {_last_part(it) for scope in self.scopes for name, iters in scope.loop_iters.items()
                if name in self.compared for it in iters} - {""}

    def _loop_list(self, node: ast.AST, scope: Scope) -> ast.AST | None:
        """The kept list (a field or global) a loop of ``scope`` runs over to bind the name ``node``, else None."""
        if not isinstance(node, ast.Name):
            return None
        return next((it for it in scope.loop_iters.get(node.id, ()) if _kept_beyond_the_call(it, scope)
                     and not isinstance(_unsubscripted(it), ast.Call)), None)

    def _find_mapping_uses(self, scope: Scope):
        asserted = set()  # an assert's test: a check that an address is unchanged asks about memory, reuses nothing
        searched = self.searched_lists
        for node in scope.nodes:  # each node before its children
            kind = type(node)
            if kind is ast.Assert:
                asserted.add(id(node.test))
            elif kind is ast.Subscript:
                how = {ast.Load: "read", ast.Store: "written", ast.Del: "popped"}[type(node.ctx)]
                yield node.value, node.slice, how, node, None
            elif kind is ast.Call and isinstance(node.func, ast.Attribute) and node.func.attr == "append" \
                    and len(node.args) == 1 and _last_part(node.func.value) in searched \
                    and _kept_beyond_the_call(node.func.value, scope):
                # an entry of an association list, searched by comparing its parts (ARH005)
                yield node.func.value, node.args[0], "remembered", node, node.args[0]
            elif kind is ast.Call and isinstance(node.func, ast.Attribute) \
                    and node.func.attr in MAPPING_METHODS and node.args:
                value = node.args[1] if node.func.attr in ("setdefault", "put") and len(node.args) > 1 else None
                yield node.func.value, node.args[0], MAPPING_METHODS[node.func.attr], node, value
            elif kind is ast.Call and isinstance(node.func, ast.Attribute) and node.func.attr == "update" \
                    and node.args and isinstance(node.args[0], ast.Dict):  # m.update({key: value})
                for k, v in zip(node.args[0].keys, node.args[0].values):
                    if k is not None:
                        yield node.func.value, k, "written", node, v
            elif kind is ast.Compare and len(node.ops) == 1 and isinstance(node.ops[0], (ast.In, ast.NotIn)):
                yield node.comparators[0], node.left, "tested", node, None
            elif kind is ast.Compare and len(node.ops) == 1 and isinstance(node.ops[0], (ast.Eq, ast.NotEq)) \
                    and id(node) not in asserted:
                # ``self._last_id != id(x)``: one side remembered, the other an object's now (ARH005)
                for held, now in ((node.left, node.comparators[0]), (node.comparators[0], node.left)):
                    if _kept_beyond_the_call(held, scope) and _of_now(now, scope):
                        yield held, now, "compared", node, None
                    elif (kept := self._loop_list(held, scope)) is not None and _of_now(now, scope) \
                            and self._loop_list(now, scope) is None:
                        yield kept, now, "compared", node, None  # a part of a kept list's entry
            elif kind is ast.Assign:
                for t in node.targets:
                    if isinstance(t, ast.Subscript):
                        yield t.value, t.slice, "written", t, node.value
                comp = node.value
                if len(node.targets) == 1 and isinstance(node.targets[0], (ast.Attribute, ast.Name)):
                    # ``self._by_id = {id(x): v for x in xs}``: a mapping filled whole, each entry a put
                    if isinstance(comp, ast.DictComp):
                        yield node.targets[0], comp.key, "written", node, comp.value
                    elif isinstance(comp, ast.SetComp):
                        yield node.targets[0], comp.elt, "added", node, None
                target, value = node.targets[0], node.value
                pairs = zip(target.elts, value.elts) if isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple) \
                    and len(target.elts) == len(value.elts) else [(target, value)]
                for t, v in pairs if len(node.targets) == 1 else ():  # ``self._last_id = id(x)``, ``_p, _o = p, o``
                    if isinstance(t, (ast.Attribute, ast.Name)) and _last_part(t) in self.compared \
                            and _kept_beyond_the_call(t, scope):
                        yield t, v, "remembered", node, v

    def _calls_and_uses(self, scope: Scope) -> None:
        own = scope.cls.name if scope.cls is not None else ""
        # a function nested in a method reads the method's ``self``: its uses of ``self.m`` are the class's
        owner = scope
        while owner.cls is None and owner.parent is not None:
            owner = owner.parent
        outer_self = next(iter(_positional(owner.node)), "") if owner is not scope and owner.cls is not None else ""
        seen = set()
        for mapping, key, how, at, stored in self.mapping_uses(scope):
            if (id(at), how, id(mapping)) in seen:
                continue
            seen.add((id(at), how, id(mapping)))
            root = _unsubscripted(mapping)
            cls = owner.cls.name if outer_self and dotted(root).partition(".")[0] == outer_self \
                and outer_self not in scope.params else own
            parts, flow = self.value(key, scope)
            if not parts:
                continue
            if how in REMEMBERED:  # kept in a field or global (mapping_uses yields no other): ARH005
                text = _held_in(mapping, cls)
                if is_address(parts):  # within the function: not in its summary
                    self.uses.append(Use(self.path, at.lineno, at.col_offset + 1, how, text, cls,
                                         without_params(parts), flow + (self.step(at, f"{text} ({how})"),),
                                         ast.unparse(stored) if stored else ""))
                continue
            life = self.lifetime(mapping, scope)
            text = ast.unparse(mapping)
            sink = self.step(at, f"{'key of' if how != 'added' else 'member of'} {text} ({how})")
            stored_text = ast.unparse(stored) if stored is not None else ""
            if life == "persistent":
                if is_address(parts):
                    self.uses.append(Use(self.path, at.lineno, at.col_offset + 1, how, text, cls,
                                         without_params(parts), flow + (sink,), stored_text))
                for p in params_in(parts):
                    if scope.qualname:
                        self._add_use(scope.summary.key_params, p, Use(
                            self.path, at.lineno, at.col_offset + 1, how, text, cls, without_params(parts),
                            flow + (sink,), stored_text))
            elif life.startswith("param:") and is_address(parts) and scope.qualname:
                self._add_use(scope.summary.mapping_params, life[6:], Use(
                    self.path, at.lineno, at.col_offset + 1, how, text, cls, parts, flow + (sink,), stored_text))
        for node in scope.nodes:
            if type(node) is ast.Call:
                name = last_name(node.func)
                if not self._through_call(node, scope, own) and name and name not in self.wants \
                        and (name not in BUILTIN_NAMES or name in MAPPING_METHODS):
                    args = node.args[1:] if name in MAPPING_METHODS else node.args
                    if any(is_address(self.value(a, scope)[0]) for a in [*args, *(k.value for k in node.keywords)]):
                        self.wants.add(name)

    def _use_through(self, call: ast.Call, scope: Scope, cls: str, u: Use, parts: Parts, flow: Flow) -> Use:
        """A key reaching ``self.<mapping>`` in a method called on another object (``table.add(ptr)``,
        ``cache.get(device, key)``): the cache is that object, and it lives as long as the caller's
        reference to it; the use is reported at the call."""
        func = call.func
        receiver = func.value if isinstance(func, ast.Attribute) else None
        if receiver is None or not u.mapping.startswith("self.") or dotted(receiver) in ("self", "cls"):
            return Use(u.path, u.line, u.col, u.how, u.mapping, u.cls, parts, flow, u.value, u.guards)
        if self.lifetime(receiver, scope) != "persistent":
            return Use(u.path, u.line, u.col, "local", u.mapping, u.cls, parts, flow)
        return Use(self.path, call.lineno, call.col_offset + 1, u.how, ast.unparse(receiver), cls, parts,
                   flow, u.value, u.guards)

    @staticmethod
    def _add_use(table: dict, param: str, use: Use) -> None:
        uses = table.setdefault(param, [])
        if not any((u.path, u.line, u.col, u.mapping) == (use.path, use.line, use.col, use.mapping) for u in uses):
            uses.append(use)

    def _through_call(self, call: ast.Call, scope: Scope, cls: str) -> bool:
        """A call whose callee stores an argument in a field, keys a mapping with it, or takes the mapping."""
        summaries = self.callees(call, scope)
        if not summaries:
            return False
        callee = ast.unparse(call.func)
        for summary in summaries:
            if not (summary.key_params or summary.mapping_params or summary.field_params or summary.filled_params):
                continue
            bound = self.bind(call, summary)
            for p, (parts, flow) in summary.filled_params.items():
                if isinstance(bound.get(p), ast.Name):
                    self._bind_name(scope, bound[p].id, parts, flow + (self.step(call, f"filled by {callee}()"),),
                                    call)
            for p, arg in bound.items():
                here = self.step(call, f"passed to {callee}() as {p}")
                if p in summary.key_params or p in summary.field_params:
                    parts, flow = self.value(arg, scope)
                    for key in summary.field_params.get(p, ()):
                        self._write_field(key, parts, flow + (here,))
                    for u in summary.key_params.get(p, ()):
                        if is_address(parts):
                            self.uses.append(self._use_through(call, scope, cls, u, without_params(parts) | u.parts,
                                                               flow + (here,) + u.flow))
                        for q in params_in(parts):
                            if scope.qualname:
                                self._add_use(scope.summary.key_params, q, Use(
                                    u.path, u.line, u.col, u.how, u.mapping, u.cls, u.parts,
                                    flow + (here,) + u.flow, u.value, u.guards))
                if p in summary.mapping_params:
                    life = self.lifetime(arg, scope)
                    for u in summary.mapping_params[p]:
                        passed = u.flow + (self.step(call, f"{ast.unparse(arg)} passed to {callee}() as {p}"),)
                        if life == "persistent":
                            self.uses.append(Use(u.path, u.line, u.col, u.how, ast.unparse(arg), cls, u.parts,
                                                 passed, u.value, u.guards))
                        elif life.startswith("param:") and scope.qualname:
                            self._add_use(scope.summary.mapping_params, life[6:], Use(
                                u.path, u.line, u.col, u.how, u.mapping, u.cls, u.parts, passed, u.value, u.guards))
        return True

    # -- guards ------------------------------------------------------------------------------------

    def _root_facts(self, root: ast.AST) -> tuple[bool, list[ast.Compare], bool]:
        """(makes a weak reference, its comparisons, compares with ``is``), read once per class or function."""
        if id(root) not in self._facts:
            nodes = list(walk(root))
            compares = [n for n in nodes if isinstance(n, ast.Compare)]
            self._facts[id(root)] = (
                any(isinstance(n, ast.Call) and last_name(n.func) in self.weakref_names for n in nodes), compares,
                any(isinstance(op, ast.Is) for n in compares for op in n.ops))
        return self._facts[id(root)]

    def _uses_weakref(self, roots: list[ast.AST]) -> bool:
        return any(self._root_facts(root)[0] for root in roots)

    def _returns_address(self, name: str) -> bool:
        return any(is_address(self.summaries[q].returns) for q in [name, *self.methods.get(name, ())]
                   if q in self.summaries)

    def _guards(self, roots: list[ast.AST], key: Parts, mapping_kind: str = "") -> dict[str, bool]:
        """Which guards the code around a cache has. Static evidence only: the audit settles it."""
        memo_key = (tuple(map(id, roots)), key, mapping_kind)
        if memo_key not in self._guards_memo:
            self._guards_memo[memo_key] = self._find_guards(roots, key, mapping_kind)
        return dict(self._guards_memo[memo_key])

    def _find_guards(self, roots: list[ast.AST], key: Parts, mapping_kind: str) -> dict[str, bool]:
        compares = [n for root in roots for n in self._root_facts(root)[1]]
        recheck = False
        version_checked = False
        for cmp in compares:
            for side in [cmp.left, *cmp.comparators]:
                for n in ast.walk(side):
                    if isinstance(n, ast.Attribute) and n.attr == "_version":
                        version_checked = True
                    # A key part computed afresh and compared: the referent is rechecked.
                    if isinstance(n, ast.Call) and isinstance(n.func, (ast.Attribute, ast.Name)) and (
                            last_name(n.func) in STORAGE_METHODS | {"data_ptr"}
                            or self._returns_address(last_name(n.func))):
                        recheck = True
        methods = [n.name for root in roots if isinstance(root, ast.ClassDef)
                   for n in root.body if isinstance(n, ast.FunctionDef)]
        return {
            "liveness weakref": self._uses_weakref(roots) or mapping_kind in WEAK_VALUE_MAPPINGS,
            "storage identity recheck": recheck,
            "version": version_checked or any(kind == "version" for kind, _ in key),
            "request scope": any("request" in m for m in methods),
        }

    @staticmethod
    def suggested_level(guards: dict[str, bool]) -> str:
        level = 0
        for guard in ("liveness weakref", "storage identity recheck", "request scope"):
            if not guards[guard]:
                break
            level += 1
        return str(Level(level))

    def _finding(self, code: str, at: tuple[str, int, int], message: str, key: Parts, guards: dict[str, bool],
                 cls: ast.ClassDef | None = None, notes: list[str] | None = None,
                 key_text: list[str] | None = None, liveness_text: str = "liveness weakref",
                 flow: Flow = (), why: str = "", lines: list[int] | None = None, cache: str = "") -> None:
        level = self.suggested_level(guards)
        present = [liveness_text if g == "liveness weakref" else g for g, on in guards.items() if on]
        path, line, col = at
        self.findings.append(Finding(
            path, line, col, code, message, key_text or describe_parts(key), present,
            [g for g, on in guards.items() if not on], level, self._audit(cls, level),
            (notes or []) + self._subclass_notes(cls, key, level),
            flow=[{"path": p, "line": ln, "col": c, "text": t} for p, ln, c, t in flow], why=why,
            lines=lines or [line], cache=cache))

    def _audit(self, cls: ast.ClassDef | None, level: str, base: ast.ClassDef | None = None) -> str | None:
        """The audit command for a cache class with get/put (its own or inherited from ``base``)."""
        if cls is None:
            return None
        methods = {n.name for c in (cls, base) if c is not None for n in c.body
                   if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
        if not {"get", "put"} <= methods:
            return None
        return f"{how_to_run()} audit {self.module}:{cls.name} --require {max(level, 'L2')}"

    def _subclass_notes(self, cls: ast.ClassDef | None, key: Parts, base_level: str) -> list[str]:
        """A subclass in the same module may add the guard its base lacks (request scope, say)."""
        notes = []
        for name, sub in self.classes.items():
            if cls is not None and any(last_name(b) == cls.name for b in sub.bases):
                level = self.suggested_level(self._guards([cls, sub], key))
                if level != base_level:
                    check = self._audit(sub, level, base=cls)
                    notes.append(f"subclass {name} suggests {level}" + (f"; check: {check}" if check else ""))
        return notes

    # -- the rules ---------------------------------------------------------------------------------

    def _mapping_constructors(self) -> dict[str, str]:
        """``self._entries = OrderedDict()`` -> ``{"self._entries": "OrderedDict"}``."""
        found = {}
        for node in self.assignments:
            if node.value is not None:
                kind = (last_name(node.value.func) if isinstance(node.value, ast.Call)
                        else {ast.Dict: "dict", ast.Set: "set"}.get(type(node.value), ""))
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for t in targets:
                    if kind and isinstance(t, (ast.Name, ast.Attribute)) and dotted(t):
                        found[dotted(t)] = kind
        return found

    def mapping_kind(self, name: str) -> str:
        """What made the mapping: by its name, else by its attribute name alone when one kind of
        mapping has it in this module (``ctx.table`` made as ``self.table = WeakValueDictionary()``)."""
        if name in self.constructors:
            return self.constructors[name]
        kinds = self.constructor_kinds.get(name.rpartition(".")[2], set())
        return next(iter(kinds)) if "." in name and len(kinds) == 1 else ""

    def _roots(self, use: Use) -> list[ast.AST]:
        """The code whose guards count for a mapping: its class, else the functions that name it;
        and the class of the entries stored in it (``m[k] = Entry(t)``)."""
        roots = [self.classes[use.cls]] if use.cls in self.classes else self._functions_using(use.mapping)
        entry = use.value.partition("(")[0]
        if entry in self.classes:
            roots.append(self.classes[entry])
        return roots

    def guards_of(self, uses: list[Use], parts: Parts) -> dict[str, bool]:
        foreign = [u.guards for u in uses if u.path != self.path and u.guards]
        if foreign:
            return dict(foreign[0])
        roots = [r for u in uses if u.path == self.path for r in self._roots(u)]
        roots += [self.key_classes[c].node for c in key_class_names(parts) if c in self.key_classes]
        return self._guards(roots, parts, self.mapping_kind(dotted_text(uses[0].mapping)))

    def _pins_its_object(self, uses: list[Use]) -> str:
        """Why an entry keeps its key's object from being freed, or ``""``: a value that holds the object
        (``m[id(x)] = x``, ``m[t.data_ptr()] = (t, out)``), a weak-valued mapping whose value is the object
        (the entry dies with it), or a weak reference to it checked with ``is`` on the hit."""
        objects = set().union(*map(self._keyed_objects_at_use, uses))
        if not objects:
            return ""
        weak_values = self.mapping_kind(dotted_text(uses[0].mapping)) in WEAK_VALUE_MAPPINGS
        weak = re.compile(r"\b(?:ref|WeakMethod|WeakIdRef)\((%s)\)" % "|".join(map(re.escape, objects)))
        for u in uses:
            if not u.value:
                continue
            held = {obj for obj in objects if self._value_holds(u, obj)}
            if held and weak_values:
                return f"the entry's value is {sorted(held)[0]} itself, held weakly: the entry dies with it"
            if held:
                return (f"the entry holds {sorted(held)[0]} itself: its {self._reused_what(u.parts)} stays taken "
                        "while the entry lives")
            if weak.search(u.value) and u.path == self.path and any(
                    self._root_facts(r)[2] for r in self._roots(u)):
                return "the entry holds a weak reference to its object, compared with `is` on a hit"
        return ""

    def _value_holds(self, use: Use, obj: str) -> bool:
        """Does the value ``use`` stores hold ``obj``: as an item (``(obj, v)``), through a wrapper class
        of this module that keeps it (``Entry(obj)``), or, for a local name, through what the function
        last bound that name to before the put (``val = Entry(name, obj)`` then ``m[k] = val``) or an
        attribute it then set on it (``val.obj = obj``); only where the function binds that name once."""
        if obj in _items(use.value) or self._wrapper_holds(use.value, obj):
            return True
        fn = self._function_at(use.line)
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) or not use.value.isidentifier():
            return False
        name = use.value
        before = sorted((n for n in walk(fn) if isinstance(n, ast.Assign) and n.lineno < use.line
                         and len(n.targets) == 1), key=lambda n: n.lineno)
        binds = [n for n in before if isinstance(n.targets[0], ast.Name) and n.targets[0].id == name]
        if len(binds) != 1:
            return False  # bound in several places (``obj = None`` on one branch): which one reaches the put?
        last = binds[0]
        if any(isinstance(n, (ast.For, ast.While)) and n.lineno < last.lineno <= (n.end_lineno or n.lineno) < use.line
               for n in walk(fn)):
            return False  # bound in a loop that ended before the put: which binding is it?
        bound = ast.unparse(last.value)
        if obj in _items(bound) or self._wrapper_holds(bound, obj):
            return True
        return any(isinstance(n.targets[0], ast.Attribute) and dotted(n.targets[0].value) == name
                   and n.lineno > last.lineno and obj in _items(ast.unparse(n.value)) for n in before)

    def _keyed_objects_at_use(self, use: Use) -> set[str]:
        """The objects whose id keys ``use``, named as the use's own code names them: an id taken of a
        function's parameter and returned (``def key(group): return f"{id(group)}"``) is of the argument
        the call passes (``key(meta["group"])`` -> ``meta['group']``), so a value holding that argument
        holds the object."""
        names = set()
        obj = ""
        for path, line, _col, text in use.flow:
            obj = _keyed_object(text) or obj
            if obj and text.startswith("returned by ") and path == self.path:
                obj = self._argument_for(obj, line, text[len("returned by "):].removesuffix("()"))
            if not obj:
                continue
            names.add(obj)
        return names

    def _argument_for(self, obj: str, line: int, callee: str) -> str:
        """``obj`` (``group``, ``group.x``) as the call to ``callee`` at ``line`` passes it, or ``""`` when
        ``obj`` is no parameter of that function of this module."""
        root, dot, rest = obj.partition(".")
        call = next((n for n in walk(self._function_at(line)) if isinstance(n, ast.Call)
                     and getattr(n, "lineno", 0) == line and ast.unparse(n.func) == callee), None)
        defs = [(f, c) for f, c in self.functions if call is not None and f.name == last_name(call.func)]
        if len(defs) != 1:
            return ""
        fn, cls = defs[0]
        params = _positional(fn)
        if cls is not None and not any(last_name(d) == "staticmethod" for d in fn.decorator_list):
            params = params[1:]
        bound = {**dict(zip(params, call.args)), **{k.arg: k.value for k in call.keywords if k.arg}}
        arg = bound.get(root)
        return ast.unparse(arg) + dot + rest if arg is not None and not isinstance(arg, ast.Starred) else ""

    def _held_by_the_same_object(self, uses: list[Use]) -> str:
        """Why a field of ids cannot outlive its objects, or ``""``: for every id put into it
        (``self._ids.append(id(p))``, ``self._by_id[id(p)] = v``, or an id kept in a field and put by
        another method), the function that takes that id also keeps the object in another field of the
        same instance that keeps every object put in it (``self._params.append(p)``), and no method
        drops that field without this one."""
        if not uses[0].mapping.startswith("self.") or uses[0].path != self.path:
            return ""
        attr = uses[0].mapping.partition(".")[2]
        objects = {obj for u in uses for t in u.flow if (obj := _keyed_object(t[3])) and t[3].startswith("id(")}
        taken = []  # (object, line where its id is taken) for every id put
        for u in uses:
            if u.how in ("written", "added"):
                ids = [(obj, t[1]) for t in u.flow if t[0] == self.path and t[3].startswith("id(")
                       and (obj := _keyed_object(t[3]))]
                if not ids:
                    return ""
                taken += ids
        # puts the uses do not list (``self._ids.append(id(p))`` beside ``id(p) in self._ids``)
        for fn in {id(f): f for f in (self._function_at(u.line) for u in uses)}.values():
            for node in walk(fn):
                put = _put_into(node, attr)
                taken += [(obj, node.lineno) for obj in objects if put is not None and f"id({obj})" in ast.unparse(put)]
        reasons = []
        for obj, line in taken:
            fn = self._function_at(line)
            holder = _field_keeping(fn, obj, attr) or _collection_kept_with(fn, obj, attr) or _iterated_from_a_field(fn, obj, attr) \
                or self._kept_by_callers(uses[0].cls, fn, obj, attr)
            if not holder or not self._dropped_together(uses[0].cls, holder, attr):
                return ""
            reasons.append(f"the same object keeps {obj} in self.{holder}")
        return reasons[0] if reasons else ""

    def _kept_by_callers(self, cls: str | None, fn: ast.AST, param: str, attr: str, hops: int = 3) -> str:
        """The field of ``self`` in which every caller keeps the object it passes as ``fn``'s parameter
        ``param`` (``self._seen.append(obj)`` then ``self._mkref(obj)``, which takes ``id(obj)``), through
        private methods of ``cls`` only (a public one may be called from outside with anything), else ``""``."""
        if cls not in self.classes or hops == 0 or not getattr(fn, "name", "_").startswith("_") \
                or param not in _positional(fn)[1:]:
            return ""
        position = _positional(fn)[1:].index(param)
        holders = set()
        for method in (m for m in self.classes[cls].body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))):
            for call in (n for n in walk(method) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                         and n.func.attr == fn.name and dotted(n.func.value) == "self"):
                if len(call.args) <= position or not isinstance(call.args[position], ast.Name):
                    return ""
                passed = call.args[position].id
                holder = _field_keeping(method, passed, attr) \
                    or self._kept_by_callers(cls, method, passed, attr, hops - 1)
                if not holder:
                    return ""
                holders.add(holder)
        return holders.pop() if len(holders) == 1 else ""

    def _dropped_together(self, cls: str | None, holder: str, attr: str) -> bool:
        """Whatever removes from ``self.<holder>`` (a global ``holder`` when ``cls`` is None), or binds it
        anew, does the same to ``self.<attr>`` (else the object can go while its id stays). Read per
        method of ``cls`` (per function of the module), each with the methods (functions) it calls: a
        helper that drops the holder alone is fine when each of its callers drops the table too
        (``release()`` calling ``_free()`` then ``_unassign()``); one nothing here calls must itself."""
        if cls is not None and cls not in self.classes:
            return False
        owner = "self" if cls is not None else ""
        functions = {f.name: f for f in (self.classes[cls].body if cls is not None else
                                         [f for f, c in self.functions if c is None])
                     if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)) and f.name != "__init__"}
        calls = {name: {last_name(n.func) for n in walk(f) if isinstance(n, ast.Call)
                        and (dotted(n.func.value) == "self" if isinstance(n.func, ast.Attribute) else cls is None)}
                 & set(functions) for name, f in functions.items()}
        patterns = {table: (_removal(table, owner, any_entry=True), f"{owner}.{table}" if owner else table)
                    for table in (holder, attr)}
        direct = {}
        for name, f in functions.items():
            nodes = [n for n in walk(f) if type(n) in (ast.Delete, ast.Assign, ast.AnnAssign) or type(n) is ast.Call
                     and isinstance(n.func, ast.Attribute) and n.func.attr in REMOVING]
            direct[name] = {table for table, (removes, bound) in patterns.items()
                            if any(_deletes(n, removes) or _binds(n, bound) for n in nodes)}

        def drops(name: str, path: frozenset = frozenset()) -> set[str]:
            return direct[name].union(*(drops(c, path | {name}) for c in calls[name] if c not in path))
        called = set().union(*calls.values())
        # a public method may be called from outside as well: it counts on its own
        return all(attr in dropped for name in functions if name not in called or not name.startswith("_")
                   if holder in (dropped := drops(name)))

    def _put_while_a_pinned_table_has_it(self, uses: list[Use]) -> str:
        """Why each entry's id stays taken, or ``""``: every put runs where the same key was found in
        another table of the same owner whose entries hold their objects (``assert k in self._tensors``,
        ``if k in _pending and k not in done:``), and whatever drops that table's entries drops this
        table's too. The object then lives as long as this entry."""
        mapping = uses[0].mapping.partition("[")[0]
        puts = [u for u in uses if u.how in ("written", "added")]
        if not puts or any(u.path != self.path for u in puts):
            return ""
        owner = mapping.partition(".")[0] if "." in mapping else ""
        if owner not in ("", "self") or "." in mapping.partition(".")[2]:
            return ""
        cls = uses[0].cls if owner == "self" else None
        attr = mapping.rpartition(".")[2]
        reasons = []
        for u in puts:
            fn = self._function_at(u.line)
            keys = _keys_put_at(fn, u.line, mapping)
            tables = [t for t in _membership_guards(fn, u.line, keys)
                      if (t.partition(".")[0] == "self") == (owner == "self") and t.count(".") == (owner == "self")]
            held = next((t for t in tables if (cls or _module_of(t, self.module), t.rpartition(".")[2]) in self.pinned
                         and self._dropped_together(cls, t.rpartition(".")[2], attr)), "")
            if not held:
                return ""
            reasons.append(f"each put runs where its key is in {held}, whose entries hold their objects, "
                           f"and {mapping} is dropped wherever {held} is")
        return reasons[0]

    def _wrapper_holds(self, value: str, obj: str) -> bool:
        """Is ``obj`` kept by an object the value builds: ``Entry(obj, out)`` where ``Entry`` (a class of
        this module) stores that argument in a field, or is a dataclass without its own ``__init__``."""
        try:
            tree = ast.parse(value, mode="eval").body
        except SyntaxError:
            return False
        for call in (n for n in walk(tree) if isinstance(n, ast.Call)):
            cls = self.classes.get(last_name(call.func))
            if cls is None:
                continue
            init = next((n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "__init__"), None)
            if init is None:
                if any(last_name(d.func if isinstance(d, ast.Call) else d) == "dataclass" for d in cls.decorator_list):
                    if any(ast.unparse(a) == obj for a in [*call.args, *(k.value for k in call.keywords)]):
                        return True
                continue
            params = [a.arg for a in init.args.posonlyargs + init.args.args][1:]
            bound = {**dict(zip(params, call.args)), **{k.arg: k.value for k in call.keywords if k.arg}}
            if any(ast.unparse(arg) == obj and _keeps(init, p, cls) for p, arg in bound.items()):
                return True
        return False

    def _only_removes(self, uses: list[Use]) -> str:
        """Why a mapping's uses here look nothing up, or ``""``: every one pops an entry, or reads it in a
        function that then pops it (``if m.get(k) is ref: m.pop(k)``, a weak reference's callback)."""
        if any(u.how not in ("popped", "read") or u.path != self.path for u in uses):
            return ""
        popping = {id(self._function_at(u.line)) for u in uses if u.how == "popped"}
        if not popping or any(id(self._function_at(u.line)) not in popping for u in uses):
            return ""
        if any(self._value_used(u) for u in uses if u.how == "popped"):
            return ""  # ``return m.pop(k)``: the removed value goes on, a lookup that removes
        return "it only removes entries here (each read is followed by removing that entry): nothing is looked up"

    def _value_used(self, use: Use) -> bool:
        """Does the code go on with what a ``pop`` at ``use`` returns (anything but a bare statement)?"""
        fn = self._function_at(use.line)
        for node in walk(fn):
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) \
                    and (node.value.lineno, node.value.col_offset + 1) == (use.line, use.col):
                return False
            if isinstance(node, ast.Delete) and any((t.lineno, t.col_offset + 1) == (use.line, use.col)
                                                    for t in node.targets):
                return False
        return True

    def _removed_when_its_object_dies(self, uses: list[Use]) -> str:
        """Why an entry goes when its object does, or ``""``: wherever an entry is put, the function that
        puts it also makes a ``weakref.finalize`` or a weak reference, on the object whose id keys it, with
        a callback that pops, deletes or discards from that mapping (a finalizer elsewhere, or on another
        object, does not vouch for this entry)."""
        attr = uses[0].mapping.rpartition(".")[2].partition("[")[0]
        puts = [u for u in uses if u.how in ("written", "added")]
        if not attr or not puts or any(u.path != self.path for u in puts):
            return ""
        removes = _removal(attr)
        reasons = []
        for u in puts:
            around = self._function_at(u.line)
            # the weak reference must watch the object whose id keys this entry, not another one
            watched = self._keyed_objects_at_use(u)
            reason = next((f"{ast.unparse(node)} (line {node.lineno}) removes the entry when its object dies"
                           for fn in self._made_with(around) for node in walk(fn)
                           if isinstance(node, ast.Call) and len(node.args) >= 2
                           and ast.unparse(node.args[0]) in watched
                           and any(self._callback_removes(c, removes, fn)
                                   for c in _callbacks(node, self.weakref_names))), "")
            if not reason and watched == {"self"}:
                reason = self._removed_in_del(u, around, removes)
            if not reason:
                return ""
            reasons.append(reason)
        return reasons[0]

    def _filled_by(self, mapping: str) -> set[int]:
        """For a table a function of this module returns (``_ids()``, an ``lru_cache`` getter): the lines
        of that function, its nested functions included, that put into the local it returns."""
        if not mapping.endswith("()") or "." in mapping:
            return set()
        fn = next((f for f, c in self.functions if c is None and f.name == mapping[:-2]), None)
        if fn is None:
            return set()
        returned = {n.value.id for n in walk(fn) if isinstance(n, ast.Return) and isinstance(n.value, ast.Name)}
        return {n.lineno for n in walk(fn) for name in returned if _key_put_into(n, name) is not None}

    def _made_with(self, fn: ast.AST) -> list[ast.AST]:
        """``fn``, and for a class's ``__new__`` its ``__init__`` with the same leading parameters: both run
        for every instance made, on the same arguments (a weak reference made in ``__init__`` for an
        entry ``__new__`` put, Celery's ``saferef``)."""
        cls = next((c for c in self.classes.values() if fn in c.body), None)
        if cls is None or getattr(fn, "name", "") != "__new__":
            return [fn]
        init = next((m for m in cls.body if isinstance(m, ast.FunctionDef) and m.name == "__init__"), None)
        if init is None or _positional(init)[1:2] != _positional(fn)[1:2]:
            return [fn]
        return [fn, init]

    def _removed_in_del(self, put: Use, around: ast.AST, removes: re.Pattern) -> str:
        """An entry keyed by ``id(self)`` that the class's ``__del__`` removes under the same key goes as
        its object dies, before the id can be given again (h5py's registry, filled in ``__cinit__``)."""
        cls = self.classes.get(put.cls or "")
        if cls is None or around not in cls.body:
            return ""
        keys = _keys_put_at(around, put.line, put.mapping.partition("[")[0]) | {"id(self)"}
        delete = next((n for m in cls.body if isinstance(m, ast.FunctionDef) and m.name == "__del__"
                       for n in walk(m) if _removes_key(n, removes, keys)), None)
        return f"{cls.name}.__del__ removes the entry (line {delete.lineno}) as its object dies" if delete else ""

    def _gone_when_the_call_ends(self, uses: list[Use]) -> str:
        """Why no entry outlives the call that puts it, or ``""``: wherever an entry is put, the function
        that puts it holds the object whose id keys it as a parameter (alive on the stack for the call),
        and a ``finally`` of that function removes from the mapping or drops it whole
        (``repr_running.discard(key)``, ``CONTEXT.seen = None``): a recursion guard, not a cache."""
        name = uses[0].mapping.partition("[")[0]
        attr = name.rpartition(".")[2]
        if not attr or any(u.path != self.path for u in uses):
            return ""
        puts = [(u.line, _keyed_objects(u), False) for u in uses if u.how in ("written", "added")]
        # a list of ids (a stack) is filled by ``append``, which no use lists: every one in the owner's code
        for fn, cls, call in self.appends.get(name, ()):
            if name.startswith("self.") and (cls is None or cls.name != uses[0].cls):
                continue
            ids = {t.id: _keyed_object(ast.unparse(n.value)) for n in walk(fn) if isinstance(n, ast.Assign)
                   for t in n.targets if isinstance(t, ast.Name)}
            arg = ast.unparse(call.args[0])
            puts.append((call.lineno, {ids.get(arg, "") or _keyed_object(arg)} - {""}, True))
        if not puts:
            return ""
        removes = _removal(attr, any_entry=True)
        for line, keyed_objects, pushed in puts:
            around = self._function_at(line)
            if not isinstance(around, (ast.FunctionDef, ast.AsyncFunctionDef)):
                return ""
            params = {a.arg for a in around.args.posonlyargs + around.args.args + around.args.kwonlyargs}
            keyed = {obj.partition(".")[0] for obj in keyed_objects}
            if not keyed or not keyed <= params:
                return ""
            keys = _keys_put_at(around, line, name)
            # ``stack.append(k)`` then ``finally: stack.pop()``: the pop takes the last one pushed, this one
            final = [n for t in _tries_guarding(around, line) for stmt in t.finalbody for n in walk(stmt)]
            if not any(_removes_key(n, removes, keys) or (isinstance(n, ast.Assign)
                                                         and any(dotted(t) == name for t in n.targets))
                       or pushed and isinstance(n, ast.Call) and not n.args and isinstance(n.func, ast.Attribute)
                       and n.func.attr == "pop" and dotted(n.func.value) == name
                       for n in final):
                return ""
        return (f"a finally of the function that puts each entry removes it (or drops {name}) while its object, "
                "a parameter, is alive: no entry outlives its call")

    def _function_at(self, line: int) -> ast.AST:
        """The innermost function whose body holds ``line`` (the module, outside every function)."""
        around = [s.node for s in self.scopes[1:] if s.node.lineno <= line <= (s.node.end_lineno or s.node.lineno)]
        return max(around, key=lambda n: n.lineno, default=self.scopes[0].node)

    def _callback_removes(self, callback: ast.AST, removes: re.Pattern, around: ast.AST) -> bool:
        """``m.pop``, ``partial(m.pop, k)``, ``lambda _: m.pop(k)``, or a function that deletes from m: one
        nested in ``around`` if it has one of that name, else one of the module."""
        if removes.search(ast.unparse(callback)):
            return True
        if isinstance(callback, ast.Call) and last_name(callback.func) == "partial" and callback.args:
            return self._callback_removes(callback.args[0], removes, around)
        if isinstance(callback, ast.Lambda) and isinstance(callback.body, ast.Call):  # lambda r: self._drop(k)
            return self._callback_removes(callback.body.func, removes, around)
        if isinstance(callback, ast.Call) and isinstance(callback.func, ast.Name):
            # ``ref(key, _remover(id(key), ...))``: a function of the module that makes the callback; the
            # nested functions it returns must remove
            maker = next((s.node for s in self.scopes[1:] if s.node.name == callback.func.id
                          and s.parent is None and s.cls is None), None)
            returned = {n.value.id for n in walk(maker) if isinstance(n, ast.Return)
                        and isinstance(n.value, ast.Name)} if maker is not None else set()
            made = [n for n in walk(maker) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                    and n is not maker and n.name in returned] if maker is not None else []
            return bool(made) and all(any(_deletes(n, removes) for n in walk(fn)) for fn in made)
        if isinstance(callback, ast.Attribute) and dotted(callback.value) == "self":
            # ``self._died``, set in the class from a function (``self._died = died``): that function
            assigned = next((n.value for n in self.assignments if isinstance(n, ast.Assign)
                             and isinstance(n.value, ast.Name)
                             and any(dotted(t) == dotted(callback) for t in n.targets)), None)
            callback = assigned or callback
        if isinstance(callback, (ast.Name, ast.Attribute)):
            name = last_name(callback)
            named = [n for n in walk(around) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                     and n.name == name and n is not around] or \
                [s.node for s in self.scopes[1:] if s.node.name == name]
            return any(_deletes(n, removes) for fn in named[:1] for n in walk(fn))
        return False

    def _pinned(self, uses: list[Use]) -> bool:
        attr = uses[0].mapping.rpartition(".")[2]
        owner = uses[0].cls or _module_of(uses[0].mapping, self.module)
        if (owner, attr) in self.pinned or ("." in uses[0].mapping and any(a == attr for _, a in self.pinned)):
            return True
        sources = {step[:3] for u in uses for step in u.flow if step[3].startswith("id(")}
        return bool(sources) and sources <= self.pinned_sources

    def check_mappings(self) -> None:
        """ARH001, one finding per cache (its first use), listing every line that uses it, with the flow
        of the first."""
        groups: dict[tuple, list[Use]] = {}
        seen = set()
        # A global (a bare name) is one table whichever functions use it: a class's methods and the
        # module's functions alike. It is the class's only when that class alone uses it.
        owners: dict[tuple, set] = {}
        module_names = self.scopes[0].assigned
        for u in self.uses:
            name = u.mapping.partition("[")[0]
            if u.path == self.path and name in module_names \
                    and not self.scope_of[id(self._function_at(u.line))].is_local(name):  # not a local alias
                owners.setdefault((u.path, u.mapping), set()).add(u.cls)
        for u in self.uses:
            if (u.path, u.line, u.col, u.mapping, u.how) in seen:
                continue
            seen.add((u.path, u.line, u.col, u.mapping, u.how))
            if (u.how == "argument" and u.path == self.path) or u.how == "local":
                continue  # a functools cache of this module (its own rule below), or a container of one call
            cls = None if len(owners.get((u.path, u.mapping), ())) > 1 else u.cls
            groups.setdefault((u.how == "argument", u.path, cls, u.mapping), []).append(u)
        for g in list(groups):
            remembered = [u for u in groups[g] if u.how in REMEMBERED]  # a value kept and compared (ARH005)
            if remembered:
                self._remembered_and_compared(remembered)
                groups[g] = [u for u in groups[g] if u.how not in REMEMBERED]  # its uses as a mapping, if any
                if not groups[g]:
                    del groups[g]
        # An id() key cannot be reused while the entry holds the object: in this mapping, or in another
        # mapping of the package that the same id() keys (a registry and its side tables). A guard, reported
        # as such: whether every entry goes when its object goes is for the audit to settle.
        identity_only = {g for g, uses in groups.items()
                         if {k for u in uses for k, _ in u.parts} <= {"identity", "version", "layout", "key class"}}
        for g in identity_only:
            if self._pins_its_object(groups[g]) or self.mapping_kind(dotted_text(g[3])) in WEAK_VALUE_MAPPINGS \
                    or self._removed_when_its_object_dies(groups[g]):
                self.pinned.add((g[2] or _module_of(g[3], self.module), g[3].rpartition(".")[2]))
                # the ids its puts take (a lookup's id says nothing: ``if k in pinned: return`` then ``t[k] = v``)
                self.pinned_sources.update(step[:3] for u in groups[g] if u.how in ("written", "added")
                                           for step in u.flow if step[3].startswith("id("))
        for (is_functools, path, cls_name, name), uses in groups.items():
            uses.sort(key=lambda u: (u.line, u.col))
            first = uses[0]
            key_parts = Parts().union(*(u.parts for u in uses))
            pinned = (is_functools, path, cls_name, name) in identity_only and self._pinned(uses)
            # Safe only for a key of ids: an id is taken for as long as its object lives. An address
            # is not: a tensor the entry holds (or whose death removes it) can leave its storage
            # (``set_``, ``.data =``, ``resize_``) while it lives, and the address be given away.
            # A weak-valued mapping of its own counts as pinned for the guard, not as safe: its value
            # may be something other than the object (the entry then outlives the object).
            own_weak_values = self.mapping_kind(dotted_text(name)) in WEAK_VALUE_MAPPINGS
            # An entry that holds its object (or goes with it) cannot go stale, but a key that another
            # object kept can: ``state.session_id = session.hash_key``, looked up after the session died,
            # finds the next session at that id.
            put_fields = {t[3] for u in uses if u.how in ("written", "added") for t in u.flow}
            stale_key, kept_apart = next(((u, apart) for u in uses if u.how not in ("written", "added")
                                          and (apart := _kept_by_another(u) - put_fields)), (None, set()))
            safe = self._only_removes(uses) or self._reused_what(key_parts) == "id()" and stale_key is None and (
                self._pins_its_object(uses) or self._removed_when_its_object_dies(uses)
                or self._held_by_the_same_object(uses) or self._gone_when_the_call_ends(uses)
                or self._put_while_a_pinned_table_has_it(uses) or (
                    pinned and not own_weak_values and "where it is filled (or another table keyed by the same id()), "
                    "each entry holds its object or goes when it dies"))
            lines = sorted({u.line for u in uses} | (self._filled_by(name) if path == self.path else set()))
            where = f" (lines {', '.join(map(str, lines))})" if len(lines) > 1 else ""
            cls = self.classes.get(cls_name) if path == self.path else None
            classes = key_class_names(key_parts)
            self.used_key_classes.update(classes)
            guards = self.guards_of(uses, key_parts)
            guards["liveness weakref"] |= pinned
            what = self._reused_what(key_parts)
            why = (f"once the object is freed, its {what} can be given to another object, whose lookup then "
                   "finds this entry")
            if stale_key is not None:
                kept = sorted(kept_apart)[0][len("stored in "):]
                why = (f"the key is kept in {kept}, apart from its object: once that object is freed, another "
                       f"can take its {what} and enter the table, and the kept key then finds it")
            if is_functools:
                message = (f"{name} is keyed by an argument made of {and_join(describe_parts(key_parts))}: "
                           f"once the tensor is freed, its {what} can match another tensor")
                self._finding("ARH002", (path, first.line, first.col), message, key_parts, guards,
                              flow=first.flow, why=why)
                continue
            kind = self.mapping_kind(dotted_text(name))
            message = (f"{name}{f' ({kind})' if kind else ''} is {'/'.join(sorted({u.how for u in uses}))} "
                       f"with a key made of {and_join(describe_parts(key_parts))}: once the object is freed, "
                       f"its {what} can match another object{where}")
            self._finding("ARH001", (path, first.line, first.col), message, key_parts, guards, cls,
                          flow=(stale_key or first).flow, why=why, cache=name,
                          lines=[first.line] + [ln for ln in lines if ln != first.line],
                          liveness_text="holds its object (its id() is not reused while the entry lives)" if pinned
                          else "liveness weakref")
            found = self.findings[-1]
            found.safe = safe or None
            if not found.safe and found.level >= "L2" and self._reused_what(key_parts) == "address":
                # Static evidence only, as every level here: the audit named with it settles it.
                found.safe = (f"its guards suggest {found.level}: a weak reference drops a dead object's entry and "
                              "the storage is compared afresh on a hit, so a reused address misses (static "
                              f"evidence: {found.audit or 'an audit of the cache'} settles it)")

    def _remembered_and_compared(self, uses: list[Use]) -> None:
        """ARH005: an address or id kept in a field or global (``self._last_id = id(x)``) and compared with
        an object's own (``if self._last_id != id(y):``), a cache of one entry: once the first object is
        freed, another at its address passes for it. Safe where the id is kept with its object (in the
        value, or in another field set in the same function)."""
        stored = [u for u in uses if u.how == "remembered"]
        compared = [u for u in uses if u.how == "compared"]
        if not stored or not compared:
            return
        uses = sorted(uses, key=lambda u: (u.line, u.col))
        first, name = uses[0], uses[0].mapping
        key_parts = Parts().union(*(u.parts for u in uses))
        what = self._reused_what(key_parts)
        lines = sorted({u.line for u in uses})
        message = (f"{name} keeps the {what} of an object (line {stored[0].line}) and compares it with another's "
                   f"(line {compared[0].line}): once the object is freed, its {what} can be given to another "
                   "object, which then passes for it")
        cls = self.classes.get(first.cls) if first.path == self.path else None
        self._finding("ARH005", (first.path, first.line, first.col), message, key_parts,
                      self.guards_of(uses, key_parts), cls, flow=stored[0].flow + compared[0].flow[-1:],
                      why=f"a freed object's {what} can be given to another object", lines=lines, cache=name)
        self.findings[-1].safe = (what == "id()" and self._remembered_with_its_object(stored)
                                  or self._rechecked_through_a_weak_reference(stored, compared)) or None

    def _rechecked_through_a_weak_reference(self, stored: list[Use], compared: list[Use]) -> str:
        """Why each comparison is a recheck of the same object, or ``""``: the function that keeps the value
        also keeps a weak reference to its object in a field, and each comparing function reads it
        (``storage = self.weakref()``): the comparison asks whether that object moved, not who it is."""
        fields = set()
        for u in stored:
            objects = _keyed_objects(u)
            fn = self._function_at(u.line)
            weak = {dotted(t) for n in walk(fn) if isinstance(n, (ast.Assign, ast.AnnAssign))
                    and isinstance(n.value, ast.Call) and last_name(n.value.func) in self.weakref_names
                    and n.value.args and ast.unparse(n.value.args[0]) in objects
                    for t in (n.targets if isinstance(n, ast.Assign) else [n.target]) if dotted(t).startswith("self.")}
            if u.path != self.path or not weak:
                return ""
            fields |= weak
        for u in compared:
            fn = self._function_at(u.line)
            if u.path != self.path or not any(isinstance(n, ast.Call) and dotted(n.func) in fields for n in walk(fn)):
                return ""
        return (f"the object is read back through its weak reference {sorted(fields)[0]}: the comparison rechecks "
                "the same object (a dead one reads None)")

    def _remembered_with_its_object(self, stored: list[Use]) -> str:
        """Why each remembered id keeps its object, or ``""``: the value kept holds the object too
        (``self._last = (id(x), x)``), or the function that keeps it keeps the object in another field."""
        reasons = []
        for u in stored:
            fn = self._function_at(u.line)
            objects = _keyed_objects(u) | _ids_named(fn, u.value)
            if objects and objects <= _items(u.value):  # every one whose id it keeps (a receiver and a sender)
                reasons.append(f"the value kept holds {and_join(sorted(objects))} "
                               f"{'itself' if len(objects) == 1 else 'themselves'}")
                continue
            attr = u.mapping.rpartition(".")[2]
            holder = next((h for n in walk(fn) for obj in objects if (h := _kept_in_field(n, obj, attr))), "")
            if u.path != self.path or not holder:
                return ""
            reasons.append(f"the same function keeps the object in self.{holder}")
        return (reasons[0] + ": its id stays taken while it is kept") if reasons else ""

    def check_weak_key_dicts(self) -> None:
        """ARH003: a WeakKeyDictionary keyed by tensors compares keys with the tensor's ==."""
        groups: dict[tuple, list[ast.AST]] = {}
        for scope in self.scopes:
            for mapping, key, how, at, _ in self.mapping_uses(scope):
                if self.mapping_kind(dotted(mapping)) == "WeakKeyDictionary" and self.is_tensor(key, scope) \
                        and self.lifetime(mapping, scope) == "persistent":
                    groups.setdefault((scope.cls, dotted(mapping)), []).append(at)
        for (cls, name), ats in groups.items():
            ats.sort(key=lambda a: (a.lineno, a.col_offset))
            lines = sorted({a.lineno for a in ats})
            where = f" (lines {', '.join(map(str, lines))})" if len(lines) > 1 else ""
            # Entries die with their key, but the key is compared with the tensor's own ==.
            guards = {"liveness weakref": True, "storage identity recheck": False, "version": False,
                      "request scope": False}
            message = (f"{name} (WeakKeyDictionary) is keyed by tensors: it compares keys with the tensor's "
                       "elementwise ==, so a lookup raises for a tensor of more than one element and misses "
                       "a NaN scalar; torch.utils.weak.WeakTensorKeyDictionary compares by identity" + where)
            at = ats[0]
            self._finding("ARH003", (self.path, at.lineno, at.col_offset + 1), message, Parts(), guards, cls,
                          key_text=["the tensor object (hash by id(), compared with ==)"],
                          liveness_text="liveness (entries die with their key)",
                          flow=(self.step(at, f"tensor key of {name}"),),
                          why="a tensor key is compared with its elementwise ==", lines=lines)

    @staticmethod
    def _reused_what(parts: Parts) -> str:
        return "id()" if {kind for kind, _ in parts} <= {"identity", "version", "layout"} else "address"

    def _functions_using(self, name: str) -> list[ast.AST]:
        if self._names_used is None:
            self._names_used = {}
            for scope in self.scopes[1:]:
                for n in {n.id for n in scope.nodes if type(n) is ast.Name}:
                    self._names_used.setdefault(n, []).append(scope.node)
        return self._names_used.get(name.split(".", 1)[0].split("[", 1)[0], [])

    def _is_functools_cache(self, decorator: ast.AST) -> bool:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        name = dotted(target)
        return "lru_cache" in name.rsplit(".", 1)[-1] or name == "functools.cache" \
            or (name == "cache" and self.functools_cache)

    def _declare_functools_sinks(self) -> None:
        """The arguments of a functools-cached function are the keys of its cache: a sink for callers
        in other modules (this module's callers are checked by the rule itself)."""
        for scope in self.scopes[1:]:
            decorators = [d for d in scope.node.decorator_list if self._is_functools_cache(d)]
            if decorators and scope.parent is None:
                at = decorators[0]
                for p in scope.summary.params:
                    sink = self.step(at, f"argument {p} of {scope.qualname}() (functools cache)")
                    scope.summary.key_params[p] = [Use(self.path, at.lineno, at.col_offset + 1, "argument",
                                                       f"functools cache of {scope.qualname}()", "", Parts(),
                                                       (sink,))]

    def _cache_evidence(self, fn: ast.AST, is_method: bool) -> list[tuple[str, Parts, Flow]]:
        """Why a cached function takes a tensor: (what shows it, key parts, flow; empty for the tensor itself)."""
        evidence = [(f"parameter {a.arg} is annotated as a tensor", Parts(), ())
                    for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs
                    if annotation_is_tensor(a.annotation)]
        for scope in self.scopes:
            for call in (n for n in scope.nodes if isinstance(n, ast.Call)):
                func = call.func
                if not ((isinstance(func, ast.Name) and func.id == fn.name and not is_method)
                        or (isinstance(func, ast.Attribute) and func.attr == fn.name
                            and isinstance(func.value, ast.Name) and func.value.id in ("self", "cls"))):
                    continue
                for arg in [*call.args, *(k.value for k in call.keywords)]:
                    arg_parts, flow = self.value(arg, scope)
                    if is_address(arg_parts):
                        evidence.append((f"line {call.lineno} passes {ast.unparse(arg)}", without_params(arg_parts),
                                         flow + (self.step(call, f"passed to {fn.name}()"),)))
                    elif self.is_tensor(arg, scope):
                        evidence.append((f"line {call.lineno} passes the tensor {ast.unparse(arg)}", Parts(),
                                         (self.step(call, f"tensor {ast.unparse(arg)} passed to {fn.name}()"),)))
        return evidence

    def check_functools_caches(self) -> None:
        """ARH002: functools.lru_cache / cache over a tensor, or over a key built from its address."""
        for fn, cls in self.functions:
            decorators = [d for d in fn.decorator_list if self._is_functools_cache(d)]
            if not decorators:
                continue
            params = [a.arg for a in fn.args.posonlyargs + fn.args.args]
            evidence = self._cache_evidence(fn, cls is not None and params[:1] in (["self"], ["cls"]))
            if not evidence:
                continue
            key_parts = Parts().union(*(p for _, p, _ in evidence))
            notes = [what for what, _, _ in evidence[1:4]]
            at = (self.path, decorators[0].lineno, decorators[0].col_offset + 1)
            sink = self.step(decorators[0], f"argument of {fn.name}() (functools cache)")
            flow = next((f for _, p, f in evidence if is_address(p)), evidence[0][2]) + (sink,)
            if key_parts:
                classes = key_class_names(key_parts)
                self.used_key_classes.update(classes)
                guards = {"liveness weakref": any(self.key_classes[c].weakref for c in classes),
                          "storage identity recheck": False,
                          "version": any(k == "version" for k, _ in key_parts), "request scope": False}
                made = and_join(describe_parts(key_parts - {("key class", c) for c in classes}))
                message = (f"functools cache on {fn.name}() is keyed by "
                           + (f"{', '.join(classes)}, made of " if classes else "") + f"{made}: {evidence[0][0]}")
                self._finding("ARH002", at, message, key_parts, guards, notes=notes, flow=flow,
                              why="once the tensor is freed, its address can match another tensor's")
            else:
                # The cache holds its arguments strongly: the tensor cannot be freed while cached, so
                # its id() is not reused; what goes wrong is a stale result after an in-place write.
                guards = {"liveness weakref": True, "storage identity recheck": False, "version": False,
                          "request scope": False}
                message = (f"functools cache on {fn.name}() takes a tensor ({evidence[0][0]}): keyed by its id(), "
                           "it holds the tensor and its memory until evicted and returns the old result after "
                           "an in-place write or a storage swap")
                self._finding("ARH002", at, message, key_parts, guards, notes=notes,
                              key_text=["the tensor object (hash by id())"],
                              liveness_text="pins the tensor (a strong reference: its address is not reused "
                                            "while cached)", flow=flow,
                              why="an in-place write keeps the key and changes the value")

    def check_key_classes(self) -> None:
        """ARH004: a key class whose instances this module never uses as a key, reported where it is defined."""
        for name, kc in self.key_classes.items():
            if name in self.used_key_classes:
                continue
            guards = self._guards([kc.node], kc.parts)
            guards["storage identity recheck"] = False  # its __eq__ compares stored keys, not the referent
            message = (f"{name} hashes by {and_join(describe_parts(kc.parts))}: a mapping keyed by it can match "
                       "a different tensor once the first one is freed")
            flow = next((f for (c, _), (_, f) in self.fields.items() if c == name and f), ()) or next(
                (s.summary.returns_flow for s in self.scopes if s.qualname == f"{name}.__hash__"), ())
            self._finding("ARH004", (self.path, kc.node.lineno, kc.node.col_offset + 1), message, kc.parts,
                          guards, flow=flow + (self.step(kc.node, f"hashed by {name}.__hash__"),),
                          why="a key made of an address can equal a later object's key")
            self.findings[-1].safe = self._safe_key_class(kc) or None

    def _safe_key_class(self, kc: KeyClass) -> str:
        """Why a key class that hashes by ``id()`` cannot match a later object, or ``""``: it keeps the
        object whose id it hashes (JAX's ``WrapHashably``), or it is a weak reference whose ``__eq__``
        compares referents with ``is`` (torch's ``WeakIdRef``), so a key whose object died equals no key
        of a live one, whatever their hashes."""
        if self._reused_what(kc.parts) != "id()":
            return ""
        hashed = {m[1] for n in walk(kc.node) if isinstance(n, ast.Call)
                  and (m := re.fullmatch(r"id\((\w+)\)", ast.unparse(n)))}
        kept = {ast.unparse(n.value) for n in walk(kc.node) if isinstance(n, ast.Assign)
                and any(isinstance(t, ast.Attribute) and dotted(t.value) == "self" for t in n.targets)}
        if hashed and hashed <= kept:
            return (f"{kc.node.name} keeps the object whose id() it hashes ({sorted(hashed)[0]}): the id stays taken "
                    "while the key lives")
        weak_base = any(last_name(b) in WEAKREF_NAMES for b in kc.node.bases)
        eq = next((n for n in kc.node.body if isinstance(n, ast.FunctionDef) and n.name == "__eq__"), None)
        if not weak_base or eq is None or not self._root_facts(eq)[2]:
            return ""
        return (f"{kc.node.name} is a weak reference whose __eq__ compares the referents with `is`: a key whose "
                "object died equals no live object's key")

    def run(self) -> list[Finding]:
        self._declare_functools_sinks()
        self.resolve()
        self.check_mappings()
        self.check_weak_key_dicts()
        self.check_functools_caches()
        self.check_key_classes()
        return self.findings

    def exports(self) -> tuple[dict[str, Summary], dict[tuple[str, str], tuple[Parts, Flow]]]:
        """What other modules import: the summaries of top-level functions and methods that pass an address
        on, and the fields this module fills with one."""
        summaries = {}
        for scope in self.scopes[1:]:
            s = scope.summary
            if scope.parent is not None or not (is_address(s.returns) or s.key_params or s.mapping_params):
                continue
            for uses in [*s.key_params.values(), *s.mapping_params.values()]:
                for u in uses:
                    if u.guards is None and u.path == self.path:
                        u.guards = self.guards_of([u], u.parts)
            summaries[scope.qualname] = s
        return summaries, {k: self.fields[k] for k in self.written_fields}


def dotted_text(expression: str) -> str:
    """``self._cache`` stays; ``self.get_cache()`` or ``d[k]`` is not a plain dotted name."""
    return expression if re.fullmatch(r"[\w.]+", expression) else ""
