"""Workflows that drive a library's stateful places through its public API, the way its users
do, for ``address-reuse hunt LIBRARY``: one module per library (``LIBRARIES``). Each recipe is a
plain function ``recipe(prompt, seed, reset=False)`` that builds, uses and lets go of its own
objects, one job per call; ``reset=True`` is what a user can do today to keep the library's state
from one job out of the next. A module names the prompts its jobs are served with (``PROMPTS``)
and the package parts ``scan`` looks in for the places worth driving (``SCAN``), and may name the
places that no run on a machine without a GPU or a cluster reaches, with why (``UNREACHABLE``);
each recipe names the places it drives (``recipe.drives``, each ``path/in/package.py:line``, found
by ``place`` from the code on that line, so that a release that moves the line moves the place).

``repro.recipes.torch_workflows:grad_scaler_trials/no-reset`` is the recipe as a
``differential --call`` spec (``/reset`` with the reset; ``/fixed`` with no reset and the library
patched by ``recipe.fix``, the change its maintainers could make)."""

from __future__ import annotations

import functools
import importlib
import importlib.util
from pathlib import Path

LIBRARIES = {
    "torch": "repro.recipes.torch_workflows",
    "bitsandbytes": "repro.recipes.bitsandbytes_workflows",
    "accelerate": "repro.recipes.accelerate_workflows",
    "transformers": "repro.recipes.transformers_workflows",
    "peft": "repro.recipes.peft_workflows",
}
MODES = ("no-reset", "reset")
FIXED = "fixed"  # served with no reset, the library patched by the recipe's fix


def load(library: str):
    """The recipe module of ``library`` (one of ``LIBRARIES``)."""
    return importlib.import_module(LIBRARIES[library])


def _source_lines(library: str, path: str) -> tuple[str, ...]:
    """The lines of ``path`` in the installed ``library`` package (read at each call: a recipe
    module names a few places, once, at its import)."""
    spec = importlib.util.find_spec(library)
    if spec is None or not spec.submodule_search_locations:
        raise ImportError(f"{library} is not installed as a package")
    return tuple((Path(spec.submodule_search_locations[0]) / path).read_text(encoding="utf-8").splitlines())


def place(library: str, path: str, code: str) -> str:
    """``path:line`` of the one place in the installed ``library``'s ``path`` where ``code`` is: its
    lines, each found within one line of the file, one after the other (the place is the first).
    Named by its code, not its number, because the library is not pinned and a release moves lines;
    code that is not there, or there twice, is an error that names it."""
    lines = _source_lines(library, path)
    wanted = [part.strip() for part in code.strip().splitlines()]
    found = [i + 1 for i in range(len(lines) - len(wanted) + 1)
             if all(part in lines[i + k] for k, part in enumerate(wanted))]
    where = f"{library}/{path}: {code.strip()!r}"
    if not found:
        raise LookupError(f"{where} is not there")
    if len(found) > 1:
        raise LookupError(f"{where} found {len(found)} times, not once (at lines {found})")
    return f"{path}:{found[0]}"


def drives(*places: str, fix=None):
    """Mark a recipe with the places in the library it drives (each ``path/in/package.py:line``, as
    ``scan`` names a place) and ``fix()``, which patches the library in this process the way its
    maintainers could fix what the recipe finds (None where it finds nothing to fix)."""
    def mark(fn):
        fn.drives, fn.fix = places, fix
        return fn
    return mark


def as_calls(recipes) -> callable:
    """A module ``__getattr__`` that turns ``NAME/MODE`` into that recipe's ``fn(prompt, seed)``."""
    by_name, fixed = {fn.__name__: fn for fn in recipes}, set()

    def __getattr__(name: str):
        recipe, _, mode = name.partition("/")
        if recipe not in by_name or mode not in (*MODES, FIXED) or (mode == FIXED and not by_name[recipe].fix):
            raise AttributeError(name)
        if mode == FIXED and recipe not in fixed:  # patched once, at look-up: a warm process forks after it
            by_name[recipe].fix()
            fixed.add(recipe)
        return functools.partial(by_name[recipe], reset=mode == "reset")
    return __getattr__
