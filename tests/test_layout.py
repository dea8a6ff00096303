"""Imports go one way: harness -> repro -> cache_impl."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

pytestmark = [pytest.mark.core_model, pytest.mark.cpu]  # no model runs here

ROOT = Path(__file__).resolve().parent.parent
FORBIDDEN = {"cache_impl": {"repro", "harness"}, "repro": {"harness"}, "harness": set()}


def _imported_packages(path: Path, top_level_only: bool = False) -> set[str]:
    tree = ast.parse(path.read_text())
    names = set()
    for node in (tree.body if top_level_only else ast.walk(tree)):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


@pytest.mark.parametrize("package", list(FORBIDDEN))
def test_imports_go_one_way(package):
    for path in sorted((ROOT / package).rglob("*.py")):
        if package == "repro" and path.name == "__main__.py":
            continue  # the command line is the top of the stack: it drives the harness
        wrong = _imported_packages(path) & FORBIDDEN[package]
        assert not wrong, f"{path.relative_to(ROOT)} imports {wrong}"


def test_diffusers_is_imported_only_inside_functions():
    """Real models are optional at import time: a module may import diffusers only inside
    the functions that build or hunt a real model, never when the module is imported.
    (A standalone script the hunt writes holds its imports in a string, not here.)"""
    importers = {path.relative_to(ROOT).as_posix() for package in FORBIDDEN
                 for path in sorted((ROOT / package).rglob("*.py")) if "diffusers" in _imported_packages(path)}
    assert "repro/models/diffusers_video.py" in importers  # the check below looks where imports are
    at_import = [p for p in importers if "diffusers" in _imported_packages(ROOT / p, top_level_only=True)]
    assert not at_import, f"diffusers imported at module level in {at_import}"
