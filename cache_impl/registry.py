"""Cache designs by name, and ``resolve(spec)`` for names or ``package.module:attr``."""

from __future__ import annotations

import importlib
from typing import Callable

from cache_impl.fingerprint_lru import FingerprintLRUCache
from cache_impl.hardened import HardenedCache, RequestScopedCache
from cache_impl.levels import Level
from cache_impl.torch_weak_id import WeakIdCache
from cache_impl.weakref_lru import SourceTensorLRUCache

DESIGNS: dict[str, type] = {
    "fingerprint": FingerprintLRUCache,
    "weakref": SourceTensorLRUCache,
    "hardened": HardenedCache,
    "request_scoped": RequestScopedCache,
    "torch_weak_id": WeakIdCache,
}

CACHE_METHODS = ("get", "put", "clear", "__len__")


class CacheSpecError(ValueError):
    """A cache spec that names nothing usable. The message is one line."""


def resolve(spec: str) -> Callable[..., object]:
    """Return a factory ``f(max_size=...)`` for a registered design name or a
    ``package.module:attr`` path to a cache class (or factory function).

    The factory is tried once with ``max_size=2`` so that a spec naming
    something that is not a cache fails here, with a clear message.
    """
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
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise CacheSpecError(f"cannot import module {module_name!r} for cache spec {spec!r}: {exc}") from None
    factory = module
    for part in attr.split("."):
        try:
            factory = getattr(factory, part)
        except AttributeError:
            raise CacheSpecError(f"module {module_name!r} has no attribute {attr!r}") from None
    if not callable(factory):
        raise CacheSpecError(f"{spec!r} is not callable: need a cache class or factory")
    try:
        probe = factory(max_size=2)
    except Exception as exc:  # noqa: BLE001 - any failure here means "not a usable cache"
        raise CacheSpecError(f"{spec!r}(max_size=2) failed: {type(exc).__name__}: {exc}") from None
    missing = [m for m in CACHE_METHODS if not callable(getattr(probe, m, None))]
    if missing:
        raise CacheSpecError(f"{spec!r} does not make a cache: missing {', '.join(missing)}")
    return factory


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
