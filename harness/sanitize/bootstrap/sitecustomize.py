"""Run at the start of every Python process under ``address-reuse sanitize`` (this folder is
first on PYTHONPATH): switch the sanitizer on when ``ADDRESS_REUSE_SANITIZE`` names a data
folder, then run the ``sitecustomize`` this one shadows, if the interpreter has one.

Imports nothing heavy: a process that never imports torch pays for ``id()`` alone."""

import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))


def _start() -> None:
    try:
        from harness.sanitize import runtime
    except ImportError:  # a Python without the project: the runtime needs the standard library only
        import importlib.util
        spec = importlib.util.spec_from_file_location("_address_reuse_sanitize_runtime",
                                                      os.path.join(os.path.dirname(_HERE), "runtime.py"))
        runtime = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = runtime
        spec.loader.exec_module(runtime)
    runtime.start_from_environment()


def _run_shadowed() -> None:
    import importlib.machinery
    import importlib.util
    others = [p for p in sys.path if os.path.abspath(p or os.curdir) != _HERE]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", others)
    if spec is not None and spec.loader is not None:
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)


if os.environ.get("ADDRESS_REUSE_SANITIZE"):
    try:
        _start()
    except Exception as exc:  # noqa: BLE001 - never stop the user's process; say it once
        print(f"address-reuse sanitize: not tracking process {os.getpid()}: {type(exc).__name__}: {exc}",
              file=sys.stderr)
try:
    _run_shadowed()
except Exception as exc:  # noqa: BLE001 - as site.py does for a failing sitecustomize
    print(f"Error in sitecustomize; set PYTHONVERBOSE for traceback:\n{type(exc).__name__}: {exc}", file=sys.stderr)
