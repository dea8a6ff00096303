"""The rules: find address-keyed caches in one module's syntax tree.

Source is parsed, never imported. What a key is made of is tracked through local
variables, through helper functions and key classes of the same module, and
through helpers imported from other scanned modules (``exports`` of one module
become ``imported`` of another).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

from cache_impl.levels import Level
from harness import how_to_run

CODES = {
    "ARH001": "mapping keyed by a tensor's address or identity",
    "ARH002": "functools cache over a tensor, or over a key built from its address",
    "ARH003": "WeakKeyDictionary keyed by tensors",
    "ARH004": "class that hashes by a tensor's address",
}

# What a key can be made of: (kind, label) pairs. The first four say *where* a
# tensor lives; a key holding one of them can match a different tensor later.
ADDRESS_KINDS = ("address", "storage address", "object address", "identity")
KIND_ORDER = ("key class",) + ADDRESS_KINDS + ("version", "layout")
STORAGE_METHODS = {"untyped_storage", "storage", "_storage", "_typed_storage"}
LAYOUT_METHODS = {"size", "stride", "storage_offset", "numel", "dim"}
LAYOUT_ATTRS = {"shape", "dtype", "device", "layout", "ndim"}
# Calls that pass the parts of their arguments through to their result.
TRANSPARENT_CALLS = {"tuple", "hash", "str", "int", "hex", "repr", "frozenset", "format"}

# Methods that only a tensor has (among what keys are built from): a name they are
# called on is a tensor.
TENSOR_METHODS = {"data_ptr", "untyped_storage", "storage_offset", "stride", "is_inference",
                  "element_size", "is_contiguous", "contiguous", "detach", "requires_grad_"}
TENSOR_CONSTRUCTORS = {"tensor", "as_tensor", "from_numpy", "empty", "zeros", "ones", "full", "rand",
                       "randn", "randint", "arange", "linspace", "cat", "stack", "empty_like",
                       "zeros_like", "ones_like", "rand_like", "randn_like", "full_like", "empty_strided"}
MAPPING_METHODS = {"get": "read", "__getitem__": "read", "pop": "popped", "__delitem__": "popped",
                   "setdefault": "written", "put": "written", "__setitem__": "written",
                   "move_to_end": "read", "__contains__": "tested"}
WEAKREF_NAMES = {"ref", "WeakMethod", "finalize", "WeakIdRef", "WeakTensorRef", "StorageWeakRef"}
WEAK_VALUE_MAPPINGS = {"WeakValueDictionary"}
TENSOR_ANNOTATION = re.compile(r"\bTensor\b")


Parts = frozenset  # of (kind, label)


@dataclass
class Finding:
    """One place where a cache may hand one tensor's result to another."""

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


def child_nodes(node: ast.AST):
    """``ast.iter_child_nodes`` without the Load/Store markers: the scan visits every node of
    thousands of files, and a third of them are those markers."""
    for name in node._fields:
        if name == "ctx":
            continue
        value = getattr(node, name, None)
        if isinstance(value, ast.AST):
            yield value
        elif isinstance(value, list):
            for item in value:
                if isinstance(item, ast.AST):
                    yield item


def annotation_is_tensor(annotation: ast.AST | None) -> bool:
    if annotation is None:
        return False
    text = annotation.value if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str) \
        else ast.unparse(annotation)
    return bool(TENSOR_ANNOTATION.search(text))


@dataclass
class KeyClass:
    """A class that hashes by a tensor's address (such as ``TensorAsKey``)."""

    node: ast.ClassDef
    parts: Parts
    weakref: bool


class Scope:
    """One function (or the module body): its names, tensors and what each local name holds."""

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
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            args = node.args
            for arg in args.posonlyargs + args.args + args.kwonlyargs + [args.vararg, args.kwarg]:
                if arg is not None:
                    self.params.add(arg.arg)
                    if annotation_is_tensor(arg.annotation):
                        self.annotated.add(arg.arg)

    def finish(self) -> None:
        """Read the names, once ``nodes`` is filled."""
        self.declared_global: set[str] = set()
        self.declared_nonlocal: set[str] = set()
        self.assigned: set[str] = set()
        nested: set[str] = set()
        returned: set[str] = set()
        for n in self.nodes:
            if isinstance(n, ast.Global):
                self.declared_global.update(n.names)
            elif isinstance(n, ast.Nonlocal):
                self.declared_nonlocal.update(n.names)
            elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
                nested.add(n.name)
            elif isinstance(n, ast.Return) and isinstance(n.value, ast.Name):
                returned.add(n.value.id)
            elif isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                self.assigned.add(n.id)
            elif isinstance(n, ast.Call):
                self._tensor_evidence(n)
        # A parameter annotated as a tensor and re-bound in the body (``device = device.device``)
        # may no longer be one.
        self.tensors |= self.annotated - self.assigned
        self.env: dict[str, Parts] = {}
        # A function that returns one of its nested functions (a decorator, a factory) keeps
        # that closure's variables alive after the call.
        self.returns_closure = bool(nested & returned)

    def _tensor_evidence(self, call: ast.Call) -> None:
        func = call.func
        if isinstance(func, ast.Attribute) and func.attr in TENSOR_METHODS and isinstance(func.value, ast.Name):
            self.tensors.add(func.value.id)

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


class ModuleScan:
    """The rules applied to one parsed module."""

    def __init__(self, tree: ast.Module, path: str, module: str, imported: dict[str, Parts] | None = None):
        self.path = path
        self.module = module
        self.findings: list[Finding] = []
        self.helpers: dict[str, Parts] = dict(imported or {})  # function name -> parts of what it returns
        self.key_classes: dict[str, KeyClass] = {}
        self.used_key_classes: set[str] = set()
        self.class_attrs: dict[ast.ClassDef, dict[str, Parts]] = {}
        self.scopes: list[Scope] = [Scope(tree, None, is_module=True)]
        self.classes: dict[str, ast.ClassDef] = {}
        self.functions: list[tuple[ast.AST, ast.ClassDef | None]] = []  # (function, its class)
        self.assignments: list[ast.AST] = []
        self.functools_cache = False  # ``from functools import cache``
        self._collect(tree, self.scopes[0], None)
        for scope in self.scopes:
            scope.finish()
        self.weakref_names = set(WEAKREF_NAMES) | {
            name for name, c in self.classes.items() if any(last_name(b) in WEAKREF_NAMES for b in c.bases)}
        self.constructors = self._mapping_constructors()

    def _collect(self, root: ast.AST, scope: Scope, cls: ast.ClassDef | None) -> None:
        """One walk over the module: each node goes to the scope (function) it belongs to."""
        bodies = [(root, scope, cls)]  # the module, then each function and class met on the way
        while bodies:
            root, scope, cls = bodies.pop()
            stack = list(child_nodes(root))
            while stack:
                node = stack.pop()
                scope.nodes.append(node)
                kind = type(node)
                if kind is ast.FunctionDef or kind is ast.AsyncFunctionDef:
                    outer = scope.parent if isinstance(scope.node, ast.ClassDef) else scope  # no closure over a class
                    outer = None if outer is None or outer.is_module else outer
                    self.functions.append((node, cls))
                    inner = Scope(node, cls, outer)
                    self.scopes.append(inner)
                    bodies.append((node, inner, cls))
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
                stack.extend(child_nodes(node))

    # -- what things are made of ---------------------------------------------------------------

    def parts(self, node: ast.AST, scope: Scope) -> Parts:
        """What the value of ``node`` is made of, as far as a key is concerned."""
        if isinstance(node, ast.Call):
            return self._call_parts(node, scope)
        if isinstance(node, ast.Attribute):
            if node.attr == "_cdata":
                return Parts({("object address", "_cdata")})
            if node.attr == "_version":
                return Parts({("version", "_version")})
            if node.attr in LAYOUT_ATTRS:
                return Parts({("layout", node.attr)})
            if isinstance(node.value, ast.Name) and node.value.id == "self" and scope.cls is not None:
                return self.class_attrs.get(scope.cls, {}).get(node.attr, Parts())
            return Parts()
        if isinstance(node, ast.Name):
            return scope.env.get(node.id, Parts())
        children: list[ast.AST] = []
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            children = node.elts
        elif isinstance(node, ast.BinOp):
            children = [node.left, node.right]
        elif isinstance(node, ast.JoinedStr):
            children = [v.value for v in node.values if isinstance(v, ast.FormattedValue)]
        elif isinstance(node, ast.IfExp):
            children = [node.body, node.orelse]
        elif isinstance(node, ast.Starred):
            children = [node.value]
        elif isinstance(node, (ast.GeneratorExp, ast.ListComp, ast.SetComp)):
            children = [node.elt]
        return Parts().union(*(self.parts(c, scope) for c in children))

    def _call_parts(self, call: ast.Call, scope: Scope) -> Parts:
        func = call.func
        if isinstance(func, ast.Attribute):
            if func.attr == "data_ptr":
                inner = func.value
                if isinstance(inner, ast.Call) and isinstance(inner.func, ast.Attribute) \
                        and inner.func.attr in STORAGE_METHODS:
                    return Parts({("storage address", f"{inner.func.attr}().data_ptr()")})
                return Parts({("address", "data_ptr()")})
            if func.attr in LAYOUT_METHODS:
                return Parts({("layout", f"{func.attr}()")})
            # self.helper(t), cls.helper(t), ClassName.helper(t)
            if isinstance(func.value, ast.Name) and (func.value.id in ("self", "cls") or func.value.id in self.classes):
                return self.helpers.get(func.attr, Parts())
            return self.helpers.get(dotted(func), Parts())  # module.helper(t), from an import
        if isinstance(func, ast.Name):
            if func.id == "id" and len(call.args) == 1 and self.is_tensor(call.args[0], scope):
                return Parts({("identity", "id()")})
            if func.id in self.key_classes:
                return Parts({("key class", func.id)}) | self.key_classes[func.id].parts
            if func.id in self.helpers:
                return self.helpers[func.id]
            if func.id in TRANSPARENT_CALLS:
                return Parts().union(*(self.parts(a, scope) for a in call.args))
        return Parts()

    def is_tensor(self, node: ast.AST, scope: Scope) -> bool:
        if isinstance(node, ast.Name):
            return node.id in scope.tensors
        if isinstance(node, ast.Call):
            name = dotted(node.func)
            return name.startswith("torch.") and name.rsplit(".", 1)[-1] in TENSOR_CONSTRUCTORS
        return False

    def _fill_env(self, scope: Scope) -> None:
        for node in scope.nodes:
            targets: list[ast.AST] = []
            if isinstance(node, ast.Assign):
                targets, value = node.targets, node.value
            elif isinstance(node, (ast.AnnAssign, ast.NamedExpr)) and node.value is not None:
                targets, value = [node.target], node.value
            for target in targets:
                pairs = [(target, value)]
                if isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple) and len(target.elts) == len(value.elts):
                    pairs = list(zip(target.elts, value.elts))
                for t, v in pairs:
                    got = self.parts(v, scope)
                    if isinstance(t, ast.Name):
                        if got:
                            scope.env[t.id] = scope.env.get(t.id, Parts()) | got
                        elif isinstance(v, ast.Call) and self.is_tensor(v, scope):
                            scope.tensors.add(t.id)
                    elif isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self" \
                            and scope.cls is not None and got:
                        attrs = self.class_attrs.setdefault(scope.cls, {})
                        attrs[t.attr] = attrs.get(t.attr, Parts()) | got

    def resolve(self) -> None:
        """Local names, helpers, class attributes and key classes, until nothing changes."""
        for _ in range(4):
            before = (dict(self.helpers), {k: dict(v) for k, v in self.class_attrs.items()}, set(self.key_classes))
            for scope in self.scopes:
                self._fill_env(scope)
            for scope in self.scopes[1:]:
                returned = Parts().union(*(self.parts(n.value, scope) for n in scope.nodes
                                           if isinstance(n, ast.Return) and n.value is not None))
                if is_address(returned):
                    self.helpers[scope.node.name] = self.helpers.get(scope.node.name, Parts()) | returned
            for name, cls in self.classes.items():
                held = Parts().union(*self.class_attrs.get(cls, {}).values())
                hashes = any(isinstance(n, ast.FunctionDef) and n.name == "__hash__" for n in cls.body)
                if hashes and is_address(held):
                    self.key_classes[name] = KeyClass(cls, held, self._uses_weakref([cls]))
            if before == (self.helpers, self.class_attrs, set(self.key_classes)):
                break

    # -- guards ------------------------------------------------------------------------------------

    def _uses_weakref(self, roots: list[ast.AST]) -> bool:
        return any(isinstance(n, ast.Call) and last_name(n.func) in self.weakref_names
                   for root in roots for n in ast.walk(root))

    def _guards(self, roots: list[ast.AST], key: Parts, mapping_kind: str = "") -> dict[str, bool]:
        """Which guards the code around a cache has. Static evidence only: the audit settles it."""
        compares = [n for root in roots for n in ast.walk(root) if isinstance(n, ast.Compare)]
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
                            or (last_name(n.func) in self.helpers and is_address(self.helpers[last_name(n.func)]))):
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

    def _finding(self, code: str, at: ast.AST, message: str, key: Parts, guards: dict[str, bool],
                 cls: ast.ClassDef | None = None, notes: list[str] | None = None,
                 key_text: list[str] | None = None, liveness_text: str = "liveness weakref") -> None:
        level = self.suggested_level(guards)
        present = [liveness_text if g == "liveness weakref" else g for g, on in guards.items() if on]
        self.findings.append(Finding(
            self.path, at.lineno, at.col_offset + 1, code, message, key_text or describe_parts(key), present,
            [g for g, on in guards.items() if not on], level, self._audit(cls, level),
            (notes or []) + self._subclass_notes(cls, key, level)))

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
        attr = name.rpartition(".")[2]
        kinds = {kind for target, kind in self.constructors.items() if target.rpartition(".")[2] == attr}
        return kinds.pop() if "." in name and len(kinds) == 1 else ""

    def _persistent(self, mapping: ast.AST, scope: Scope) -> bool:
        """Does the mapping outlive one call? A local dict (a memo within one traversal) does not."""
        root = mapping
        while isinstance(root, ast.Subscript):
            root = root.value
        if isinstance(root, ast.Name):
            return not scope.is_local(root.id)
        return isinstance(root, (ast.Attribute, ast.Call))

    def _value_classes(self, scope: Scope) -> dict[ast.AST, ast.ClassDef]:
        """``m[k] = Entry(t)``: the Subscript -> Entry, a class of this module whose guards count too."""
        found = {}
        for node in scope.nodes:
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) \
                    and last_name(node.value.func) in self.classes:
                for target in node.targets:
                    found[target] = self.classes[last_name(node.value.func)]
        return found

    @staticmethod
    def mapping_uses(scope: Scope):
        """(mapping node, key node, how it is used, the node to report) for every use with a key."""
        for node in scope.nodes:
            if isinstance(node, ast.Subscript):
                how = {ast.Load: "read", ast.Store: "written", ast.Del: "popped"}[type(node.ctx)]
                yield node.value, node.slice, how, node
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and node.func.attr in MAPPING_METHODS and node.args:
                yield node.func.value, node.args[0], MAPPING_METHODS[node.func.attr], node
            elif isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], (ast.In, ast.NotIn)):
                yield node.comparators[0], node.left, "tested", node

    def check_mappings(self) -> None:
        """ARH001 and ARH003, one finding per cache (its first use), listing every line that uses it."""
        groups: dict[tuple, list] = {}
        value_classes: dict[tuple, set[ast.ClassDef]] = {}
        for scope in self.scopes:
            values = self._value_classes(scope)
            for mapping, key, how, at in self.mapping_uses(scope):
                if not self._persistent(mapping, scope):
                    continue
                key_parts = self.parts(key, scope)
                if self.mapping_kind(dotted(mapping)) == "WeakKeyDictionary" and self.is_tensor(key, scope):
                    groups.setdefault(("ARH003", scope.cls, dotted(mapping)), []).append((at, how, key_parts, scope))
                elif is_address(key_parts):
                    name = ast.unparse(mapping)
                    groups.setdefault(("ARH001", scope.cls, name), []).append((at, how, key_parts, scope))
                    if at in values:
                        value_classes.setdefault(("ARH001", scope.cls, name), set()).add(values[at])
        for (code, cls, name), uses in groups.items():
            uses.sort(key=lambda u: (u[0].lineno, u[0].col_offset))
            at = uses[0][0]
            key_parts = Parts().union(*(u[2] for u in uses))
            lines = sorted({u[0].lineno for u in uses})
            where = f" (lines {', '.join(map(str, lines))})" if len(lines) > 1 else ""
            if code == "ARH003":
                # Entries die with their key, but the key is compared with the tensor's own ==.
                guards = {"liveness weakref": True, "storage identity recheck": False, "version": False,
                          "request scope": False}
                message = (f"{name} (WeakKeyDictionary) is keyed by tensors: it compares keys with the tensor's "
                           "elementwise ==, so a lookup raises for a tensor of more than one element and misses "
                           "a NaN scalar; torch.utils.weak.WeakTensorKeyDictionary compares by identity" + where)
                self._finding(code, at, message, key_parts, guards, cls,
                              key_text=["the tensor object (hash by id(), compared with ==)"],
                              liveness_text="liveness (entries die with their key)")
                continue
            kind = self.mapping_kind(name)
            classes = key_class_names(key_parts)
            self.used_key_classes.update(classes)
            roots = ([cls] if cls is not None else self._functions_using(name)) + \
                [self.key_classes[c].node for c in classes] + list(value_classes.get((code, cls, name), ()))
            guards = self._guards(roots, key_parts, kind)
            message = (f"{name}{f' ({kind})' if kind else ''} is {'/'.join(sorted({u[1] for u in uses}))} "
                       f"with a key made of {and_join(describe_parts(key_parts))}: once the tensor is freed, "
                       f"its {self._reused_what(key_parts)} can match another tensor{where}")
            self._finding(code, at, message, key_parts, guards, cls)

    @staticmethod
    def _reused_what(parts: Parts) -> str:
        return "id()" if {kind for kind, _ in parts} <= {"identity", "version", "layout"} else "address"

    def _functions_using(self, name: str) -> list[ast.AST]:
        root = name.split(".", 1)[0].split("[", 1)[0]
        return [scope.node for scope in self.scopes[1:]
                if any(isinstance(n, ast.Name) and n.id == root for n in scope.nodes)]

    def _is_functools_cache(self, decorator: ast.AST) -> bool:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        name = dotted(target)
        return "lru_cache" in name.rsplit(".", 1)[-1] or name == "functools.cache" \
            or (name == "cache" and self.functools_cache)

    def _cache_evidence(self, fn: ast.AST, is_method: bool) -> list[tuple[str, Parts]]:
        """Why a cached function takes a tensor: (what shows it, key parts; empty for the tensor itself)."""
        evidence = [(f"parameter {a.arg} is annotated as a tensor", Parts())
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
                    arg_parts = self.parts(arg, scope)
                    if is_address(arg_parts):
                        evidence.append((f"line {call.lineno} passes {ast.unparse(arg)}", arg_parts))
                    elif self.is_tensor(arg, scope):
                        evidence.append((f"line {call.lineno} passes the tensor {ast.unparse(arg)}", Parts()))
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
            key_parts = Parts().union(*(p for _, p in evidence))
            notes = [what for what, _ in evidence[1:4]]
            if key_parts:
                classes = key_class_names(key_parts)
                self.used_key_classes.update(classes)
                guards = {"liveness weakref": any(self.key_classes[c].weakref for c in classes),
                          "storage identity recheck": False,
                          "version": any(k == "version" for k, _ in key_parts), "request scope": False}
                made = and_join(describe_parts(key_parts - {("key class", c) for c in classes}))
                message = (f"functools cache on {fn.name}() is keyed by "
                           + (f"{', '.join(classes)}, made of " if classes else "") + f"{made}: {evidence[0][0]}")
                self._finding("ARH002", decorators[0], message, key_parts, guards, notes=notes)
            else:
                # The cache holds its arguments strongly: the tensor cannot be freed while cached, so
                # its id() is not reused; what goes wrong is a stale result after an in-place write.
                guards = {"liveness weakref": True, "storage identity recheck": False, "version": False,
                          "request scope": False}
                message = (f"functools cache on {fn.name}() takes a tensor ({evidence[0][0]}): keyed by its id(), "
                           "it holds the tensor and its memory until evicted and returns the old result after "
                           "an in-place write or a storage swap")
                self._finding("ARH002", decorators[0], message, key_parts, guards, notes=notes,
                              key_text=["the tensor object (hash by id())"],
                              liveness_text="pins the tensor (a strong reference: its address is not reused "
                                            "while cached)")

    def check_key_classes(self) -> None:
        """ARH004: a key class whose instances this module never uses as a key, reported where it is defined."""
        for name, kc in self.key_classes.items():
            if name in self.used_key_classes:
                continue
            guards = self._guards([kc.node], kc.parts)
            guards["storage identity recheck"] = False  # its __eq__ compares stored keys, not the referent
            message = (f"{name} hashes by {and_join(describe_parts(kc.parts))}: a mapping keyed by it can match "
                       "a different tensor once the first one is freed")
            self._finding("ARH004", kc.node, message, kc.parts, guards)

    def run(self) -> list[Finding]:
        self.resolve()
        self.check_mappings()
        self.check_functools_caches()
        self.check_key_classes()
        return self.findings

    def exports(self) -> dict[str, Parts]:
        """Helpers other modules can import: name -> what the key they return is made of."""
        defined = {fn.name for fn, cls in self.functions if cls is None}
        return {name: parts for name, parts in self.helpers.items() if name in defined}
