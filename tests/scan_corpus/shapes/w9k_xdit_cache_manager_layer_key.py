from typing import Any, Dict, Tuple


class CacheEntry:
    def __init__(self, cache_type: str, num_cache_tensors: int = 1):
        self.cache_type = cache_type
        self.tensors = [None] * num_cache_tensors


class CacheManager:
    def __init__(self):
        self.cache: Dict[Tuple[str, Any], CacheEntry] = {}

    def register_cache_entry(self, layer, layer_type: str, cache_type: str = "naive_cache"):
        if self.cache.get((layer_type, layer), None) is not None:
            pass
        self.cache[layer_type, layer] = CacheEntry(cache_type)  # corpus: sink

    def has_cache_entry(self, layer, layer_type: str = "attn") -> bool:
        return (layer_type, layer) in self.cache

    def update_and_get_kv_cache(self, new_kv, layer, layer_type: str = "attn"):
        entry = self.cache[layer_type, layer]
        entry.tensors[0] = new_kv
        return new_kv


_CACHE_MGR = CacheManager()


def get_cache_manager():
    global _CACHE_MGR
    return _CACHE_MGR
