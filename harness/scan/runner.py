"""Which files to read, reading them on every core, and ``# noqa`` suppressions.

Two passes: the first scans every file and lists the key helpers each module
defines; the second rescans only the files that import one of them.
"""

from __future__ import annotations

import ast
import fnmatch
import gc
import os
import re
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from harness.scan.rules import Finding, ModuleScan, Parts

# Directories skipped while walking (a path named on the command line is always read).
SKIPPED_DIRS = (".*", "__pycache__", "venv", "site-packages", "node_modules")
NOQA = re.compile(r"#\s*noqa:\s*(?P<codes>[A-Z]+[0-9]+\b(?:\s*,\s*[A-Z]+[0-9]+\b)*)(?P<reason>[^#]*)")
# A file with none of these cannot hold a finding of its own (only through an imported helper).
TRIGGERS = re.compile(rb"data_ptr|_cdata|\bid\(|lru_cache|functools\.cache\b|from functools import[^\n]*\bcache\b"
                      rb"|WeakKeyDictionary")
PARALLEL_FROM = 32  # fewer files than this are scanned in this process: starting workers costs more


class ScanError(Exception):
    """A path that cannot be scanned at all (exit 2)."""


@dataclass
class FileResult:
    path: str
    module: str
    findings: list[Finding] = field(default_factory=list)
    exports: dict[str, Parts] = field(default_factory=dict)
    imports: dict[str, str] = field(default_factory=dict)  # local name -> module.name it refers to
    skipped: str | None = None  # why the file was not scanned


@dataclass
class ScanResult:
    findings: list[Finding]
    skipped: list[tuple[str, str]]  # (path, reason)
    files: int


def _excluded(rel: str, patterns: tuple[str, ...]) -> bool:
    parts = rel.split("/")
    return any(fnmatch.fnmatch(rel, p) or any(fnmatch.fnmatch(part, p) for part in parts) for p in patterns)


def collect_files(paths: list[str], exclude: tuple[str, ...] = ()) -> list[str]:
    """Every ``.py`` file under ``paths``, in a stable order. ``exclude`` globs apply to named
    paths too (pre-commit names each file); the default skips only apply while walking.
    Raises :class:`ScanError` for a path that does not exist or cannot be read."""
    files: list[str] = []
    for top in paths:
        if not os.path.exists(top):
            raise ScanError(f"{top}: no such file or directory")
        if not os.access(top, os.R_OK):
            raise ScanError(f"{top}: not readable")
        if _excluded(Path(top).as_posix(), exclude):
            continue
        if os.path.isfile(top):
            files.append(top)
            continue
        for folder, dirs, names in os.walk(top):
            rel_folder = os.path.relpath(folder, top).replace(os.sep, "/")
            rel_folder = "" if rel_folder == "." else rel_folder + "/"
            dirs[:] = sorted(d for d in dirs if not _excluded(rel_folder + d, exclude + SKIPPED_DIRS))
            files += [os.path.join(folder, n) for n in sorted(names)
                      if n.endswith(".py") and not _excluded(rel_folder + n, exclude)]
    return files


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


def scan_file(path: str, imported_table: dict[str, Parts] | None = None) -> FileResult:
    """One file: parse, apply the rules. Never raises for a bad file: it is reported as skipped."""
    module = module_name(path)
    try:
        source = Path(path).read_bytes()
    except OSError as exc:
        return FileResult(path, module, skipped=f"cannot be read: {exc.strerror or exc}")
    try:
        tree = ast.parse(source, filename=path)
    except SyntaxError as exc:
        return FileResult(path, module, skipped=f"does not parse: line {exc.lineno}: {exc.msg}")
    except ValueError as exc:  # a null byte, before Python 3.12
        return FileResult(path, module, skipped=f"does not parse: {exc}")
    imports = _imports(tree, module, path.endswith("__init__.py"))
    if imported_table is None and not TRIGGERS.search(source):
        return FileResult(path, module, imports=imports)
    imported = {}
    for local, target in imports.items():
        if imported_table and target in imported_table:
            imported[local] = imported_table[target]
        elif imported_table:  # ``import pkg.keys as keys`` then ``keys.fingerprint(t)``
            imported.update({f"{local}.{k[len(target) + 1:]}": v for k, v in imported_table.items()
                             if k.startswith(target + ".") and "." not in k[len(target) + 1:]})
    scan = ModuleScan(tree, path, module, imported)
    findings = scan.run()
    apply_noqa(findings, source.decode("utf-8", "replace").splitlines())
    return FileResult(path, module, findings, scan.exports(), imports)


def _scan_file_first(path: str) -> FileResult:
    return scan_file(path)


def _scan_file_second(job: tuple[str, dict[str, Parts]]) -> FileResult:
    return scan_file(*job)


def _map(function, jobs: list, workers: int) -> list:
    if workers <= 1 or len(jobs) < PARALLEL_FROM:
        return [function(job) for job in jobs]
    # Forked workers inherit this process's objects (all of torch, under ``python -m harness``);
    # frozen, the garbage collector in each worker does not walk them again and again while
    # the parser makes its trees (that was a third of the scan's time).
    gc.freeze()
    try:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            return list(pool.map(function, jobs, chunksize=max(1, len(jobs) // (workers * 8))))
    finally:
        gc.unfreeze()


def _helper_table(results: list[FileResult]) -> dict[str, Parts]:
    """``module.helper`` -> parts, following re-exports (``from .keys import fingerprint`` in a package)."""
    table = {f"{r.module}.{name}": parts for r in results for name, parts in r.exports.items()}
    for _ in range(4):
        added = {f"{r.module}.{local}": table[target] for r in results for local, target in r.imports.items()
                 if target in table and f"{r.module}.{local}" not in table}
        if not added:
            break
        table.update(added)
    return table


def scan_paths(paths: list[str], exclude: tuple[str, ...] = (), workers: int | None = None) -> ScanResult:
    files = collect_files(paths, exclude)
    workers = workers or os.cpu_count() or 1
    results = _map(_scan_file_first, files, workers)
    table = _helper_table(results)
    helper_modules = {name.rpartition(".")[0] for name in table}
    again = [i for i, r in enumerate(results)
             if any(t in table or t in helper_modules for t in r.imports.values())]
    if again:
        for i, second in zip(again, _map(_scan_file_second, [(files[i], table) for i in again], workers)):
            results[i] = second
    findings = sorted((f for r in results for f in r.findings), key=lambda f: (f.path, f.line, f.col, f.code))
    skipped = [(r.path, r.skipped) for r in results if r.skipped]
    return ScanResult(findings, skipped, len(files))
