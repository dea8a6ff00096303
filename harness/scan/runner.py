"""Which files to read, reading them on every core, and ``# noqa`` suppressions.

Passes: the first scans every file and lists the summaries of the functions each
module defines and the fields it fills with an address; each further pass rescans
only the files that import one of those modules or read one of those fields.
"""

from __future__ import annotations

import ast
import fnmatch
import os
import re
from collections import Counter
from contextlib import nullcontext
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from harness.scan.rules import UNIQUE_METHOD, Finding, ModuleScan, Summary, is_address
from harness.scan.workers import Workers

# Directories skipped while walking (a path named on the command line is always read).
SKIPPED_DIRS = (".*", "__pycache__", "venv", "site-packages", "node_modules")
NOQA = re.compile(r"#\s*noqa:\s*(?P<codes>[A-Z]+[0-9]+\b(?:\s*,\s*[A-Z]+[0-9]+\b)*)(?P<reason>[^#]*)")
# A file with none of these cannot hold a finding of its own (only through an imported helper).
TRIGGERS = re.compile(rb"data_ptr|_cdata|\bid\(|lru_cache|functools\.cache\b|from functools import[^\n]*\bcache\b"
                      rb"|WeakKeyDictionary|__array_interface__|__cuda_array_interface__|addressof"
                      rb"|c_void_p|c_char_p|c_wchar_p|cu_device_ptr|CUdeviceptr|(?:ptr|addr|address)\b")  # a name ending so
DEFINITION = re.compile(rb"\bdef\s+([A-Za-z_]\w*)")
# Method names too common to resolve by name alone, even where one class of the package defines them.
CONTAINER_METHODS = {"append", "extend", "insert", "remove", "index", "count", "clear", "copy", "update", "keys",
                     "values", "items", "get", "pop", "add", "discard", "setdefault", "put"}
# ``(?<!\w)``: a name starts where no letter or digit comes before it (else every suffix of every name
# is tried against ``\s*\(``, which was a tenth of the first pass on torch).
CALLED = re.compile(rb"(?<!\w)([A-Za-z_]\w*)\s*\(")
IDENTIFIER = re.compile(rb"(?<!\w)[A-Za-z_]\w*")
CLASS_NAME = re.compile(rb"\b([A-Z]\w*)")
ATTRIBUTE = re.compile(rb"\.([A-Za-z_]\w*)")
MAX_FILE_BYTES = 5_000_000  # larger files are generated tables, not code with caches
PASSES = 3
PARALLEL_FROM = 32  # fewer files than this are scanned in this process: starting workers costs more
# A tree takes about 30 times its source in memory (torch: 23 MB of such files, 700 MB of trees):
# past this much source a process parses again rather than keep more.
KEEP_SOURCE_BYTES = 40_000_000


class _Kept(dict):
    """The source, tree and facts of each file analysed in this process during a scan (a worker's, or
    the scan's own with one worker): a later pass reads it again without parsing it again."""

    source_bytes = 0

    def keep(self, path: str, source: bytes, tree: ast.Module, facts: dict) -> None:
        if path not in self and self.source_bytes + len(source) <= KEEP_SOURCE_BYTES:
            self[path] = source, tree, facts
            self.source_bytes += len(source)

    def clear(self) -> None:
        super().clear()
        self.source_bytes = 0


_KEPT = _Kept()


class ScanError(Exception):
    """A path that cannot be scanned at all (exit 2)."""


@dataclass
class FileResult:
    path: str
    module: str
    findings: list[Finding] = field(default_factory=list)
    exports: dict[str, Summary] = field(default_factory=dict)
    imports: dict[str, str] = field(default_factory=dict)  # local name -> module.name it refers to
    skipped: str | None = None  # why the file was not scanned
    attrs: frozenset = frozenset()  # the attribute names it mentions
    fields: dict = field(default_factory=dict)  # (class, attr) -> (parts, flow) it fills with an address
    sources: bool = False  # whether it reads an address itself
    defs: dict = field(default_factory=dict)  # function and method name -> how many times it defines one
    calls: frozenset = frozenset()  # the names it calls
    names: frozenset = frozenset()  # every name it mentions (a callee it can reach is among them)
    classes: frozenset = frozenset()  # the capitalised names it mentions (classes, in annotations too)
    wants: frozenset = frozenset()  # the names of the functions it passes an address to, not defined here
    analysed: bool = False
    pinned: frozenset = frozenset()  # (class, attr) of the mappings that hold the object their id() key names


@dataclass
class ScanResult:
    findings: list[Finding]
    skipped: list[tuple[str, str]]  # (path, reason)
    files: int
    # with --confirm: the command, its exit status, the sanitizer's verdict, and its stale matches
    # that no finding accounts for ("missed")
    run: dict | None = None


def _excluded(rel: str, patterns: tuple[str, ...]) -> bool:
    parts = rel.split("/")
    return any(fnmatch.fnmatch(rel, p) or any(fnmatch.fnmatch(part, p) for part in parts) for p in patterns)


def _unreadable(path: str) -> str | None:
    """Why a named path cannot be scanned, or None."""
    if not os.path.exists(path):
        if os.path.islink(path):
            return "a symbolic link that leads nowhere (broken, or a loop)"
        return "no such file or directory"
    if not os.access(path, os.R_OK):
        return "not readable"
    return None


def collect_files(paths: list[str], exclude: tuple[str, ...] = ()) -> tuple[list[str], list[tuple[str, str]]]:
    """Every ``.py`` file under ``paths``, in a stable order, and the named paths that cannot be
    read with why. ``exclude`` globs apply to named paths too (pre-commit names each file); the
    default skips only apply while walking. Linked folders are not followed (no loops)."""
    files: list[str] = []
    missing: list[tuple[str, str]] = []
    for top in paths:
        why = _unreadable(top)
        if why:
            missing.append((top, why))
            continue
        if _excluded(Path(top).as_posix(), exclude):
            continue
        if os.path.isfile(top):
            files.append(top)
            continue
        for folder, dirs, names in os.walk(top, onerror=lambda e: missing.append((e.filename, "cannot be listed: "
                                                                                    + (e.strerror or str(e))))):
            rel_folder = os.path.relpath(folder, top).replace(os.sep, "/")
            rel_folder = "" if rel_folder == "." else rel_folder + "/"
            dirs[:] = sorted(d for d in dirs if not _excluded(rel_folder + d, exclude + SKIPPED_DIRS))
            files += [os.path.join(folder, n) for n in sorted(names)
                      if n.endswith(".py") and not _excluded(rel_folder + n, exclude)]
    return files, missing


@lru_cache(maxsize=None)
def _is_package(folder: str) -> bool:
    return os.path.isfile(os.path.join(folder, "__init__.py"))


def module_name(path: str) -> str:
    """``.../site-packages/torch/sparse/_triton_ops.py`` -> ``torch.sparse._triton_ops``."""
    folder, name = os.path.split(os.path.abspath(path))
    parts = [] if name == "__init__.py" else [name.removesuffix(".py")]
    while _is_package(folder):
        folder, package = os.path.split(folder)
        parts.insert(0, package)
    return ".".join(parts) or name.removesuffix(".py")


def _top_level(body: list[ast.stmt]):
    """Module-level statements, including those under ``if``/``try``/``with`` (conditional imports)."""
    for node in body:
        yield node
        for name in ("body", "orelse", "finalbody", "handlers"):
            inner = getattr(node, name, None)
            if isinstance(inner, list) and not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                yield from _top_level(inner)


def _imports(tree: ast.Module, module: str, is_package: bool) -> dict[str, str]:
    found = {}
    for node in _top_level(tree.body):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                package = module if is_package else module.rpartition(".")[0]
                for _ in range(node.level - 1):
                    package = package.rpartition(".")[0]
                base = f"{package}.{base}" if base else package
            for alias in node.names:
                found[alias.asname or alias.name] = f"{base}.{alias.name}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    found[alias.asname] = alias.name
    return found


def apply_noqa(findings: list[Finding], lines: list[str]) -> None:
    """``# noqa: ARH001 <reason>`` on a finding's line suppresses it; without a reason it does not."""
    for f in findings:
        line = lines[f.line - 1] if f.line <= len(lines) else ""
        match = NOQA.search(line) if "noqa" in line else None
        if not match or f.code not in re.split(r"\s*,\s*", match["codes"]):
            continue
        reason = match["reason"].strip(" \t-:\u2014")
        if reason:
            f.suppressed = reason
        else:
            f.notes.append(f"# noqa: {f.code} without a reason does not suppress it")


def apply_noqa_files(findings: list[Finding], path: str, source: bytes) -> None:
    """``apply_noqa`` for findings in this file and in the files of the helpers it calls."""
    by_path: dict[str, list[Finding]] = {}
    for f in findings:
        by_path.setdefault(f.path, []).append(f)
    for where, found in by_path.items():
        try:
            text = source if where == path else Path(where).read_bytes()
        except OSError:
            continue
        apply_noqa(found, text.decode("utf-8", "replace").splitlines())


def _parse(path: str, module: str) -> tuple[bytes, ast.Module] | FileResult:
    """The file's source and tree, or a result that says why it is skipped."""
    try:
        size = os.path.getsize(path)
        if size > MAX_FILE_BYTES:
            return FileResult(path, module, skipped=f"too large ({size} bytes; the limit is {MAX_FILE_BYTES})")
        source = Path(path).read_bytes()
    except OSError as exc:
        return FileResult(path, module, skipped=f"cannot be read: {exc.strerror or exc}")
    if b"\0" in source:  # Python refuses it before parsing, with no line to point at
        return FileResult(path, module, skipped="not Python source: it holds null bytes (a binary file?)")
    try:
        tree = ast.parse(source, filename=path)
    except SyntaxError as exc:
        where = f"line {exc.lineno}: " if exc.lineno else ""
        return FileResult(path, module, skipped=f"does not parse: {where}{exc.msg}")
    except (ValueError, RecursionError, MemoryError) as exc:  # a null byte (before Python 3.12), deep nesting
        return FileResult(path, module, skipped=f"does not parse: {type(exc).__name__}: {exc}".rstrip(": "))
    return source, tree


def scan_file(path: str, imported: dict[str, Summary] | None = None,
              fields: dict | None = None, pinned: frozenset = frozenset(), analyse: bool = False) -> FileResult:
    """One file: parse, apply the rules (to a file that reads an address itself, or when ``analyse``
    says another file calls into it). ``imported``: the summaries it can call, by the names it calls
    them. Never raises for a bad file: it is reported as skipped."""
    module = module_name(path)
    if path in _KEPT:
        source, tree, facts = _KEPT[path]
    else:
        read = _parse(path, module)
        if isinstance(read, FileResult):
            return read
        source, tree = read
        # What the passes after the first decide by, read once from the text.
        facts = {"imports": _imports(tree, module, path.endswith("__init__.py")),
                 "attrs": frozenset(m.decode() for m in ATTRIBUTE.findall(source)),
                 "defs": dict(Counter(m.decode() for m in DEFINITION.findall(source))),
                 "calls": frozenset(m.decode() for m in CALLED.findall(source)),
                 "names": frozenset(m.decode() for m in IDENTIFIER.findall(source)),
                 "classes": frozenset(m.decode() for m in CLASS_NAME.findall(source))}
    sources = bool(TRIGGERS.search(source))
    if not sources and not analyse:
        return FileResult(path, module, **facts)
    _KEPT.keep(path, source, tree, facts)
    scan = ModuleScan(tree, path, module, imported, fields, pinned)
    try:
        findings = scan.run()
    except RecursionError:
        return FileResult(path, module, skipped="too deeply nested to analyse", **facts)
    apply_noqa_files(findings, path, source)
    summaries, written = scan.exports()
    return FileResult(path, module, findings, summaries, fields=written, sources=sources, wants=frozenset(scan.wants),
                      analysed=True, pinned=frozenset(scan.pinned), **facts)


def _imported(imports: dict[str, str], table: dict[str, Summary], names: frozenset) -> dict[str, Summary]:
    """The summaries this module can call, under the names it calls them by: ``helper`` for
    ``from .keys import helper``, ``keys.helper`` for ``import pkg.keys as keys``, ``Cache.get``
    for ``from .cache import Cache``. Only those whose name the module mentions (``names``): a call
    is resolved by the name written there, ``Cache(...)`` for ``Cache.__init__``."""
    found = {f"{UNIQUE_METHOD}{name}": s for name, s in _unique_methods(table) if name in names}
    for local, target in imports.items():
        candidates = [(local, table[target])] if target in table else []
        candidates += [(f"{local}.{rest}", summary) for rest, summary in _members(table).get(target, ())]
        for name, summary in candidates:
            first, _, last = name.rpartition(".")
            if (first.rpartition(".")[2] if last == "__init__" else last) in names:
                found[name] = summary
    return found


_MEMBERS: dict[int, dict[str, list]] = {}


def _members(table: dict[str, Summary]) -> dict[str, list]:
    """``{"pkg.mod": [("f", s), ("C.m", s)], "pkg.mod.C": [("m", s)]}``, built once per table."""
    if id(table) not in _MEMBERS:
        _MEMBERS.clear()
        index: dict[str, list] = {}
        for name, summary in table.items():
            parts = name.split(".")
            for cut in range(1, len(parts)):
                index.setdefault(".".join(parts[:cut]), []).append((".".join(parts[cut:]), summary))
        _MEMBERS[id(table)] = index
    return _MEMBERS[id(table)]


def _unique_methods(table: dict[str, Summary]) -> list:
    """``[(name, summary)]`` of the methods resolved by name alone (``UNIQUE_METHOD``): ``_members``
    indexes the table by its prefixes, and theirs is ``UNIQUE_METHOD``."""
    return _members(table).get(UNIQUE_METHOD.rstrip("."), [])


def _scan_file_first(path: str) -> FileResult:
    return scan_file(path)


def _scan_file_again(job: tuple[str, dict[str, Summary], dict, frozenset]) -> FileResult:
    return scan_file(*job, analyse=True)


def _map(function, jobs: list, paths: list[str], workers: Workers | None) -> list:
    if workers is None:
        return [function(job) for job in jobs]
    return workers.map(function, jobs, paths)


def _tables(results: list[FileResult]) -> tuple[dict[str, Summary], dict]:
    """``module.function`` -> summary, following re-exports (``from .keys import fingerprint`` in a
    package); and every field filled with an address anywhere in the package."""
    table = {f"{r.module}.{name}": summary for r in results for name, summary in r.exports.items()}
    for _ in range(4):
        added = {f"{r.module}.{local}": table[target] for r in results for local, target in r.imports.items()
                 if target in table and f"{r.module}.{local}" not in table}
        if not added:
            break
        table.update(added)
    # A method no other function of the package shares a name with: a call ``x.name()`` on an object of
    # unknown class, in any module, can only mean it (``tx.stream_state.cur_stream_id()``). Only getters
    # that return an address, and only names of two words or more: ``search`` or ``delete`` may as well
    # be a method of a standard library object.
    defined: Counter = Counter()
    for r in results:
        defined.update(r.defs)
    for r in results:
        for qualname, summary in r.exports.items():
            cls, _, name = qualname.rpartition(".")
            if cls and defined[name] == 1 and "_" in name.strip("_") and name not in CONTAINER_METHODS \
                    and is_address(summary.returns):
                table[f"{UNIQUE_METHOD}{name}"] = summary
    fields: dict = {}
    for r in results:
        for key, (parts, flow) in r.fields.items():
            old_parts, old_flow = fields.get(key, (frozenset(), ()))
            fields[key] = (old_parts | parts, old_flow or flow)
    return table, fields


def _calls_imported(r: FileResult, table: dict[str, Summary], wanted) -> bool:
    """Does the file call, through one of its imports, a function of ``table`` for which ``wanted`` holds?"""
    members = _members(table)
    for target in r.imports.values():
        found = [(target.rpartition(".")[2], table[target])] if target in table else []
        for name, summary in found + members.get(target, []):
            if name.rpartition(".")[2] in r.calls and wanted(summary):
                return True
    return False


def _needs_another_pass(r: FileResult, table: dict[str, Summary], fields: set[tuple[str, str]],
                        wants: set[str]) -> bool:
    """A file not analysed yet that defines a function others pass an address to; or one that calls an
    imported function taking an address, a cache, or returning an address; or reads a field holding an
    address (of a class it names)."""
    if any(cls in r.classes and attr in r.attrs for cls, attr in fields):
        return True
    if not r.analysed and not wants.isdisjoint(r.defs):
        return True
    def wanted(s: Summary) -> bool:
        return bool(is_address(s.returns) or s.mapping_params or (r.analysed and s.key_params))
    unique = (s for name, s in _unique_methods(table) if name in r.calls)
    return _calls_imported(r, table, wanted) or any(map(wanted, unique))


def scan_paths(paths: list[str], exclude: tuple[str, ...] = (), workers: int | None = None) -> ScanResult:
    """Scan every file under ``paths``. A path that does not exist is listed as skipped; only when
    no path can be scanned at all does it raise :class:`ScanError`."""
    files, missing = collect_files(paths, exclude)
    if missing and not files and len(missing) == len(paths):
        raise ScanError("; ".join(f"{p}: {why}" for p, why in missing))
    if not files and not missing and not exclude:  # an empty folder: nothing was checked, say so
        raise ScanError(f"no Python file to read in {', '.join(map(str, paths))}")
    count = workers or os.cpu_count() or 1
    with Workers(count) if count > 1 and len(files) >= PARALLEL_FROM else nullcontext() as pool:
        try:
            return _scan(files, missing, pool)
        finally:
            _KEPT.clear()  # this process's, when it read the files itself


def _scan(files: list[str], missing: list[tuple[str, str]], pool: Workers | None) -> ScanResult:
    results = _map(_scan_file_first, files, files, pool)
    # Each further pass lets summaries and fields reach one more module along the imports, and
    # analyses the files that define what the analysed ones call with an address. A file is read
    # again only when what it would be given has changed since it was last read.
    given: dict[int, tuple] = {}
    for _ in range(PASSES - 1):
        table, fields = _tables(results)
        wants = set().union(*(r.wants for r in results))
        pinned = frozenset().union(*(r.pinned for r in results))
        typed_fields = {key for key in fields if key[0]}  # another module reads a field by its class
        pinned_attrs = {attr for _, attr in pinned}
        jobs = []
        for i, r in enumerate(results):
            if r.skipped or not (_needs_another_pass(r, table, typed_fields, wants)
                                 or (r.findings and not pinned_attrs.isdisjoint(r.names))):
                continue
            imported = _imported(r.imports, table, r.names)
            inputs = (tuple(sorted((k, s.state()) for k, s in imported.items())),
                      tuple(sorted((k, v[0]) for k, v in fields.items() if k[1] in r.attrs)),
                      tuple(sorted(p for p in pinned if p[1] in r.names)), not wants.isdisjoint(r.defs))
            if given.get(i) != inputs:
                given[i] = inputs
                jobs.append((i, (files[i], imported, fields, pinned)))
        if not jobs:
            break
        again = _map(_scan_file_again, [job for _, job in jobs], [files[i] for i, _ in jobs], pool)
        for (i, _), result in zip(jobs, again):
            results[i] = result
    findings: dict[tuple, Finding] = {}
    for f in (f for r in results for f in r.findings):
        findings.setdefault((f.path, f.line, f.col, f.code), f)  # one cache seen from several modules
    skipped = missing + [(r.path, r.skipped) for r in results if r.skipped]
    return ScanResult(sorted(findings.values(), key=lambda f: (f.path, f.line, f.col, f.code)), skipped, len(files))
