"""Tensor-keyed cache designs under test, and the one fingerprint they key on.

Each design states its guarantee level (L0-L3, see README): the highest class of
allocator situation in which it never returns another source's value.
"""

from cache_impl.keys import fingerprint
from cache_impl.attach import CrossAttentionCache, attach_cross_attention_cache, cross_attention_kv
from cache_impl.fingerprint_lru import FingerprintLRUCache
from cache_impl.hardened import HardenedCache, RequestScopedCache
from cache_impl.levels import LEVELS, Level, level_below
from cache_impl.registry import (DESIGNS, CacheSpecError, declared_level, describe_spec, request_begins, request_ends,
                                  resolve)
from cache_impl.torch_weak_id import WeakIdCache
from cache_impl.weakref_lru import SourceTensorLRUCache

__all__ = [
    "DESIGNS",
    "LEVELS",
    "CacheSpecError",
    "CrossAttentionCache",
    "FingerprintLRUCache",
    "HardenedCache",
    "Level",
    "RequestScopedCache",
    "SourceTensorLRUCache",
    "WeakIdCache",
    "attach_cross_attention_cache",
    "cross_attention_kv",
    "declared_level",
    "describe_spec",
    "fingerprint",
    "level_below",
    "request_begins",
    "request_ends",
    "resolve",
]
