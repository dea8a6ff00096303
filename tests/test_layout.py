"""Imports go one way: harness -> repro -> cache_impl; inside harness, no circle; and the
command line answers ``--help`` without importing torch."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
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


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _harness_imports() -> dict[str, set[str]]:
    """harness module -> the harness modules it imports, at module level or inside a function.
    ``from harness.x import y`` counts as importing ``harness.x.y`` when that is a module."""
    modules = {_module_name(p): p for p in sorted((ROOT / "harness").rglob("*.py"))}
    graph = {}
    for name, path in modules.items():
        found = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                found.add(node.module)
                found.update(f"{node.module}.{alias.name}" for alias in node.names)
        graph[name] = {m for m in found if m in modules and m != name}
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """A circle in ``graph`` as the list of its nodes, or None."""
    state, stack = {}, []

    def visit(node):
        state[node] = "open"
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == "open":
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        state[node] = "done"
        stack.pop()
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def test_no_import_circle_in_the_harness():
    """Between modules (function-level imports count: a lazy import is still a dependency), and
    between the tools: a package per tool, and the command line on top of them. A package's
    ``__init__`` (its defaults, light) is imported by its own modules and is not a tool edge."""
    graph = _harness_imports()
    assert "harness.differential.hunt" in graph and "harness.audit.runner" in graph  # it read the tree
    assert _cycle(graph) is None, f"import circle: {' -> '.join(_cycle(graph))}"

    def tool(module: str) -> str:
        return ".".join(module.split(".")[:2])
    tools = {}
    for module, imported in graph.items():
        tools.setdefault(tool(module), set()).update(tool(m) for m in imported if tool(m) != tool(module))
    assert _cycle(tools) is None, f"the tools import each other in a circle: {' -> '.join(_cycle(tools))}"
    # The command line and the pytest plugin are the top: no tool imports them.
    for top in ("harness.__main__", "harness.pytest_plugin"):
        users = sorted(m for m, imported in graph.items() if top in imported)
        assert not users, f"{users} import the command line {top}"


# Every command's --help, answered without importing torch: a finder that refuses torch is
# installed before the command line is imported.
NO_TORCH = """
import runpy, sys
class NoTorch:
    def find_spec(self, name, path=None, target=None):
        if name == "torch" or name.startswith("torch."):
            raise ImportError("torch imported before the command line parsed its options")
sys.meta_path.insert(0, NoTorch())
runpy.run_module("harness", run_name="__main__", alter_sys=True)
"""
COMMANDS = ("repro", "audit", "compare", "selfcheck", "bench", "scan", "differential", "hunt", "sanitize", "report")


@pytest.mark.parametrize("command", ("", *COMMANDS))
def test_help_imports_no_torch_and_names_every_exit_code(command):
    done = subprocess.run([sys.executable, "-c", NO_TORCH, *([command] if command else []), "--help"],
                          capture_output=True, text=True, cwd=ROOT, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0 and not done.stderr, done.stderr[-2000:]
    assert done.stdout.startswith("usage: "), done.stdout[:500]
    if command:  # each command says what its exit codes mean, Ctrl-C included
        text = " ".join(done.stdout.split())
        assert "Exit 0" in text and "2 for bad usage" in text.replace("2 bad usage", "2 for bad usage"), text
        assert "130 on Ctrl-C" in text, text


def test_the_names_a_command_line_offers_are_the_registries_names():
    """``repro.choices`` holds the names the parser shows without torch; the registries that
    implement them hold exactly those."""
    from repro import choices
    from repro.guard import GRAD_MODES
    from repro.models.toy import PRESETS
    from repro.serving import STRATEGIES
    assert tuple(STRATEGIES) == choices.SCENARIOS
    assert tuple(PRESETS) == choices.PRESETS
    assert tuple(GRAD_MODES) == tuple(choices.GRAD_MODES)
    from repro.models import diffusers_video  # imports diffusers only inside its functions
    assert diffusers_video.ARCHITECTURES == choices.REAL_MODELS
