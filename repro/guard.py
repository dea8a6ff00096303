"""The cache under audit, called through one door.

Whatever the cache does inside a call (raise, call ``sys.exit``, raise
``KeyboardInterrupt``, hang) becomes one :class:`CacheCallFailed` with a one-line
reason, so nothing a cache does can end an audit early with a pass. Each call
also runs in the grad mode a serving pipeline uses, since a cache may switch
itself off under grad.
"""

from __future__ import annotations

import weakref

import torch

from cache_impl.registry import CallTimedOut, CtrlC, exit_call, time_limit

from repro.choices import DEFAULT_TIMEOUT, GRAD_MODES as _GRAD_MODE_NAMES

GRAD_MODES = {name: getattr(torch, fn) for name, fn in _GRAD_MODE_NAMES.items()}


# In every message about a call that did not return in time (here, and the audit's steps run in
# another thread): how a verdict tells a hang, which says nothing about safety, from a failure.
HANG = "did not return within"


def is_hang(message: str) -> bool:
    return HANG in message


class CacheCallFailed(Exception):
    """A call into the cache under audit raised, exited or hung. ``raised`` is
    True when it raised an ordinary exception (not an exit, an interrupt or a
    hang): on a tensor it does not support, that is a refusal."""

    def __init__(self, message: str, raised: bool = False, hung: bool = False):
        super().__init__(message)
        self.raised, self.hung = raised, hung


class NotTested(Exception):
    """A source of a dtype the cache said it does not support: nothing to judge."""


def call(what: str, fn, *args, timeout: float | None = DEFAULT_TIMEOUT, grad_mode: str | None = None):
    """``fn(*args)`` as user code: any way out but a return becomes CacheCallFailed."""
    try:
        with time_limit(timeout):
            if not grad_mode:
                return fn(*args)
            with GRAD_MODES[grad_mode]():
                return fn(*args)
    except CallTimedOut:
        raise CacheCallFailed(f"{what} did not return within {timeout:g} s", hung=True) from None
    except CtrlC:  # the user's, not the cache's: it ends the run
        raise
    except SystemExit as exc:
        raise CacheCallFailed(f"{what} called {exit_call(exc)}") from None
    except BaseException as exc:  # noqa: BLE001 - the cache's failure, whatever it is
        text = str(exc).splitlines()[0] if str(exc) else ""
        raise CacheCallFailed(f"{what} raised {type(exc).__name__}" + (f": {text}" if text else ""),
                              raised=isinstance(exc, Exception)) from None


def _short(value) -> str:
    try:
        text = repr(value)
    except Exception:  # noqa: BLE001 - a user's __repr__ may raise anything
        return "its repr() raised"
    return text if len(text) <= 40 else text[:37] + "..."


# Factories one of whose calls hung: {"what": the first such call}. Weak keys: a
# factory (a class, a function) that goes away takes its record with it.
HUNG: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


class GuardedCache:
    """Wraps one cache instance; ``get``, ``put``, ``clear``, ``len()`` and the
    optional request bounds go through :func:`call`. Sources of an ``unsupported``
    dtype are not passed on: the scenario that made them tests nothing."""

    def __init__(self, cache, timeout: float | None = DEFAULT_TIMEOUT, grad_mode: str | None = "no_grad",
                 unsupported: frozenset = frozenset(), hung: dict | None = None):
        self._cache, self._timeout, self._grad_mode, self._unsupported = cache, timeout, grad_mode, unsupported
        self._hung = hung if hung is not None else {}
        self._value_types: tuple = ()  # the types of the values put: what a get() may return

    def _call(self, name: str, *args):
        # Once a call hung, every later one would likely wait the whole timeout too.
        if self._hung:
            raise CacheCallFailed(f"{name}() not called: {self._hung['what']} earlier")
        try:
            return call(f"{name}()", getattr(self._cache, name), *args, timeout=self._timeout,
                        grad_mode=self._grad_mode)
        except CacheCallFailed as exc:
            if exc.hung:
                self._hung["what"] = str(exc)
            raise

    def _check_dtype(self, source) -> None:
        if self._unsupported and getattr(source, "dtype", None) in self._unsupported:
            raise NotTested(f"uses {source.dtype}, which the cache does not support")

    def get(self, source):
        self._check_dtype(source)
        value = self._call("get", source)
        # A get() that answers with something no put() gave it (a str, an int) is a broken
        # cache, not a false hit: say what it returned instead of comparing it as a value.
        if value is not None and not isinstance(value, self._value_types):
            given = "/".join(t.__name__ for t in self._value_types) or "nothing yet"
            raise CacheCallFailed(f"get() returned {_short(value)} (type {type(value).__name__}): it must return "
                                  f"None or a value put() was given ({given})")
        return value

    def put(self, source, value) -> None:
        self._check_dtype(source)
        self._call("put", source, value)
        if not isinstance(value, self._value_types):
            self._value_types += (type(value),)

    def clear(self) -> None:
        self._call("clear")

    def __len__(self) -> int:
        return self._call("__len__")

    def __getattr__(self, name):
        """Optional methods (``begin_request``, ``end_request``): present only if the
        cache has them, so ``hasattr`` still tells."""
        if name.startswith("_") or not callable(getattr(self._cache, name, None)):
            raise AttributeError(name)
        return lambda *args: self._call(name, *args)


class TimedCache:
    """A user's cache as a model calls it, each call limited to ``timeout`` seconds: one that
    hangs ends the run with CacheCallFailed (one line) instead of waiting for a Ctrl-C.
    Nothing else changes: what a call returns or raises, and every attribute, are the cache's."""

    def __init__(self, cache, timeout: float, spec: str):
        self._cache, self._timeout, self._spec = cache, timeout, spec

    def _timed(self, name: str, method, *args, **kwargs):
        try:
            with time_limit(self._timeout):
                return method(*args, **kwargs)
        except CallTimedOut:
            raise CacheCallFailed(f"cache {self._spec}: {name}() did not return within {self._timeout:g} s "
                                  f"(raise --call-timeout if it is only slow)", hung=True) from None

    def __getattr__(self, name):
        attribute = getattr(self._cache, name)
        if not callable(attribute):
            return attribute
        return lambda *args, **kwargs: self._timed(name, attribute, *args, **kwargs)

    def __len__(self) -> int:
        return self._timed("__len__", self._cache.__len__)


def timed(factory, timeout: float | None, spec: str):
    """``factory`` whose caches are :class:`TimedCache` (``factory`` itself when ``timeout`` is 0 or None)."""
    if not timeout:
        return factory
    return lambda **kwargs: TimedCache(factory(**kwargs), timeout, spec)


def guarded(factory, timeout: float | None = DEFAULT_TIMEOUT, grad_mode: str | None = "no_grad",
            unsupported: frozenset = frozenset()):
    """A factory whose caches are made, and called, through the guard."""

    name = getattr(factory, "__name__", "cache")
    hung = HUNG.setdefault(factory, {})  # shared by every cache this factory makes

    def make(**kwargs):
        arguments = ", ".join(f"{k}={v!r}" for k, v in kwargs.items())
        cache = call(f"{name}({arguments})", lambda: factory(**kwargs), timeout=timeout)
        return GuardedCache(cache, timeout, grad_mode, unsupported, hung)

    make.level = getattr(factory, "level", None)
    make.__name__ = name
    return make
