"""Tensor-keyed cache designs under test, and the one fingerprint they key on.

Each design states its guarantee level (L0-L3, see README): the highest class of
allocator situation in which it never returns another source's value.
"""

# Where each public name lives. Imported on first use (PEP 562), so that the light parts
# (``Level``, the design names in ``DESIGNS``) are there without importing torch: a command
# line answers ``--help`` before any design is loaded.
_WHERE = {
    "fingerprint": "keys",
    "CrossAttentionCache": "attach", "attach_cross_attention_cache": "attach", "cross_attention_kv": "attach",
    "FingerprintLRUCache": "fingerprint_lru",
    "HardenedCache": "hardened", "RequestScopedCache": "hardened",
    "LEVELS": "levels", "Level": "levels", "level_below": "levels",
    "DESIGNS": "registry", "CacheSpecError": "registry", "declared_level": "registry", "describe_spec": "registry",
    "request_begins": "registry", "request_ends": "registry", "resolve": "registry",
    "WeakIdCache": "torch_weak_id",
    "SourceTensorLRUCache": "weakref_lru",
}


def __getattr__(name: str):
    if name not in _WHERE:
        raise AttributeError(f"module 'cache_impl' has no attribute {name!r}")
    import importlib
    value = getattr(importlib.import_module(f"cache_impl.{_WHERE[name]}"), name)
    globals()[name] = value  # looked up once
    return value


def __dir__():
    return sorted(set(globals()) | set(_WHERE))


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
