"""``package.module:attr`` specs: how a user names their own model factory or function."""

from __future__ import annotations

import importlib

from cache_impl.registry import exit_call


def load_callable(spec: str, error: type[Exception], label: str, malformed: str):
    """The callable ``spec`` names. Raises ``error`` with one line, starting with ``label``,
    when the spec is malformed (``malformed`` is that line), its module does not import
    (any exception there: the spec is bad, whatever the user's code raised) or it names
    nothing callable."""
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise error(malformed)
    try:
        module = importlib.import_module(module_name)
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - any import failure is a bad spec, an exit too
        why = f"it called {exit_call(exc)}" if isinstance(exc, SystemExit) else f"{type(exc).__name__}: {exc}"
        raise error(f"{label}: cannot import {module_name}: {why}") from None
    found = getattr(module, attr, None)
    if not callable(found):
        raise error(f"{label}: {module_name} has no callable {attr!r}")
    return found
