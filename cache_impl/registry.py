"""Cache designs by name, and ``resolve(spec)`` for names or ``package.module:attr``."""

from __future__ import annotations

import contextlib
import importlib
import os
import _signal
import signal
import threading
from typing import Callable

from collections.abc import Mapping

from cache_impl.levels import Level


class _Designs(Mapping):
    """Registered name -> cache class. The names are known without importing a design
    (and torch with it), so a command line lists them and answers ``--help`` at once; a
    class is imported when it is first looked up."""

    _WHERE = {
        "fingerprint": "cache_impl.fingerprint_lru:FingerprintLRUCache",
        "weakref": "cache_impl.weakref_lru:SourceTensorLRUCache",
        "hardened": "cache_impl.hardened:HardenedCache",
        "request_scoped": "cache_impl.hardened:RequestScopedCache",
        "torch_weak_id": "cache_impl.torch_weak_id:WeakIdCache",
    }

    def __getitem__(self, name: str) -> type:
        module, _, cls = self._WHERE[name].partition(":")
        return getattr(importlib.import_module(module), cls)

    def __iter__(self):
        return iter(self._WHERE)

    def __len__(self) -> int:
        return len(self._WHERE)


DESIGNS: Mapping[str, type] = _Designs()

CACHE_METHODS = ("get", "put", "clear", "__len__")


class CacheSpecError(ValueError):
    """A cache spec that names nothing usable. The message is one line."""


class CallTimedOut(BaseException):
    """Raised by the alarm inside a call that ran too long (BaseException: the
    cache's own ``except Exception`` must not swallow it)."""


class CtrlC(KeyboardInterrupt):
    """The user's Ctrl-C, as a command line's SIGINT handler raises it. It passes through every
    guard around user code (re-raised like CallTimedOut), where a KeyboardInterrupt that the
    user's cache raises by itself is that cache's failure: a Ctrl-C must end the run, never
    become a verdict on the cache."""


# Raised into user code from outside it (the alarm, the user's Ctrl-C): never the user code's failure.
NOT_THE_CALLEES = (CallTimedOut, CtrlC)


class ExitCalled(SystemExit):
    """``os._exit(code)`` called by user code while a command runs (see :class:`exits_raise`).
    A SystemExit, so every guard that turns ``sys.exit`` into a one-line failure does so here too."""


def exit_call(exc: SystemExit) -> str:
    """How the user code left: ``os._exit(0)`` or ``sys.exit(3)``, for a one-line message."""
    return f"{'os._exit' if isinstance(exc, ExitCalled) else 'sys.exit'}({exc.code!r})"


class exits_raise:
    """``with exits_raise():`` makes ``os._exit`` in this process raise :class:`ExitCalled`.
    A cache or a callable that calls it would otherwise end the command at once, with its own
    exit code (0 reads as a pass) and no line. A child forked meanwhile (a worker pool) exits for
    real: the raise is for the process that entered the block only."""

    __slots__ = ("real", "pid")

    def __enter__(self) -> None:
        self.real, self.pid = os._exit, os.getpid()

        def _exit(code):
            if os.getpid() != self.pid:
                self.real(code)
            raise ExitCalled(code)

        os._exit = _exit

    def __exit__(self, *exc) -> bool:
        os._exit = self.real
        return False


def _on_alarm(signum, frame):
    raise CallTimedOut()


_KEPT = object()  # time_limit found its handler installed: whoever installed it puts the previous one back


class time_limit:
    """``with time_limit(seconds):`` interrupts the body after ``seconds`` with CallTimedOut
    (main thread only: elsewhere there is no alarm, and the body runs unlimited). A call
    stuck in C code that never returns to Python cannot be interrupted this way. A class,
    not a generator: it wraps every call into a cache, and a generator's context manager
    costs more than a cache's get()."""

    __slots__ = ("seconds", "previous")

    def __init__(self, seconds: float | None):
        on = seconds and threading.current_thread() is threading.main_thread()
        self.seconds = seconds if on else None

    def __enter__(self) -> None:
        if self.seconds:
            # The C module's calls: signal.signal's enum wrapping costs more than a cache's get().
            # Our handler may be installed already (alarm_handler(), or an enclosing time_limit).
            installed = _signal.getsignal(signal.SIGALRM) is _on_alarm
            self.previous = _KEPT if installed else _signal.signal(signal.SIGALRM, _on_alarm)
            _signal.setitimer(signal.ITIMER_REAL, self.seconds)

    def __exit__(self, *exc) -> bool:
        if self.seconds:
            _signal.setitimer(signal.ITIMER_REAL, 0)
            if self.previous is not _KEPT:
                _signal.signal(signal.SIGALRM, self.previous)
        return False


@contextlib.contextmanager
def alarm_handler():
    """Keep time_limit's handler installed across many timed calls (main thread only), so
    that each call only arms and disarms the timer: two system calls a call instead of four.
    The handler is only ever reached while a call's timer runs."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = _signal.signal(signal.SIGALRM, _on_alarm)
    try:
        yield
    finally:
        _signal.signal(signal.SIGALRM, previous)


def resolve(spec: str, timeout: float | None = None) -> Callable[..., object]:
    """Return a factory ``f(max_size=...)`` for a registered design name or a
    ``package.module:attr`` path to a cache class (or factory function).

    The factory is tried once with ``max_size=2`` so that a spec naming
    something that is not a cache fails here, with a clear message. Whatever
    the user's module or constructor does on the way (raise anything, call
    ``sys.exit``, hang past ``timeout`` seconds) becomes a one-line CacheSpecError.
    """
    try:
        with time_limit(timeout):
            return _resolve(spec)
    except CallTimedOut:
        raise CacheSpecError(f"importing and constructing {spec!r} did not finish within {timeout:g} s") from None


def _resolve(spec: str) -> Callable[..., object]:
    if not isinstance(spec, str) or not spec.strip():
        raise CacheSpecError(f"empty cache spec {spec!r}")
    if spec in DESIGNS:
        return DESIGNS[spec]
    if ":" not in spec:
        raise CacheSpecError(
            f"unknown cache {spec!r}: use one of {', '.join(DESIGNS)} or package.module:attr"
        )
    module_name, _, attr = spec.partition(":")
    if not module_name or not attr or ":" in attr:
        raise CacheSpecError(f"malformed cache spec {spec!r}: expected package.module:attr")
    if module_name.startswith("."):
        raise CacheSpecError(f"relative module {module_name!r} in cache spec {spec!r}: give the full module path")
    try:
        module = importlib.import_module(module_name)
    except NOT_THE_CALLEES:
        raise
    except BaseException as exc:  # noqa: BLE001 - user code: SyntaxError, RuntimeError, SystemExit alike
        raise CacheSpecError(f"cannot import module {module_name!r} for cache spec {spec!r}: {_one_line(exc)}") from None
    factory = module
    for part in attr.split("."):
        try:
            factory = getattr(factory, part)
        except NOT_THE_CALLEES:
            raise
        except BaseException as exc:  # noqa: BLE001 - a module __getattr__ may raise anything
            if isinstance(exc, AttributeError):
                raise CacheSpecError(f"module {module_name!r} has no attribute {attr!r}") from None
            raise CacheSpecError(f"looking up {attr!r} in {module_name!r} failed: {_one_line(exc)}") from None
    if not callable(factory):
        raise CacheSpecError(f"{spec!r} is not callable: need a cache class or factory")
    try:
        probe = factory(max_size=2)
    except NOT_THE_CALLEES:
        raise
    except BaseException as exc:  # noqa: BLE001 - any failure here means "not a usable cache"
        raise CacheSpecError(f"{spec!r}(max_size=2) failed: {_one_line(exc)}") from None
    missing = [m for m in CACHE_METHODS if not callable(getattr(probe, m, None))]
    if missing:
        raise CacheSpecError(f"{spec!r} does not make a cache: missing {', '.join(missing)}")
    return factory


def _one_line(exc: BaseException) -> str:
    if isinstance(exc, SystemExit):
        return f"called {exit_call(exc)}"
    text = str(exc).splitlines()[0] if str(exc) else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def describe_spec(spec: str, factory) -> dict:
    """What was tested, for the record: the spec, the file its factory comes from,
    that file's sha256, and the version of the installed package it belongs to."""
    import hashlib
    import inspect
    from importlib import metadata

    described = {"spec": spec, "file": None, "sha256": None, "package_version": None}
    try:
        path = inspect.getsourcefile(factory)
    except TypeError:
        path = None
    if path:
        described["file"] = path
        with open(path, "rb") as f:
            described["sha256"] = hashlib.sha256(f.read()).hexdigest()
    top = (getattr(factory, "__module__", None) or "").split(".")[0]
    for dist in metadata.packages_distributions().get(top, []):
        described["package_version"] = f"{dist} {metadata.version(dist)}"
        break
    return described


def declared_level(factory) -> Level | None:
    """The guarantee level a design states about itself (``level`` attribute:
    a Level, ``"L2"`` or ``2``), if any."""
    try:
        return Level.parse(getattr(factory, "level", None))
    except ValueError:
        return None


def request_begins(cache) -> None:
    """Tell a cache that a request begins, if it listens (``begin_request()``, as
    the request-scoped design does); any other cache needs no telling."""
    if hasattr(cache, "begin_request"):
        cache.begin_request()


def request_ends(cache) -> None:
    """Tell a cache that a request ended, if it listens (``end_request()``)."""
    if hasattr(cache, "end_request"):
        cache.end_request()
