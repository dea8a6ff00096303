import functools
import weakref


class CacheKey:
    def __init__(self, values):
        self.values = values
        self.hashvalue = hash(values)

    def __hash__(self):
        return self.hashvalue

    def __eq__(self, other):
        return self.values == other.values


def evict(cache, key):
    cache.pop(key, None)


class FakeMode:
    cache = {}

    def _prep_args_for_hash(self, result, args, id_hashed):
        for arg in args:
            if hasattr(arg, "graph"):
                result.append(type(arg))
                result.append(id(arg))
                id_hashed.append(arg)
            else:
                result.append(arg)

    def _cache_key(self, func, args):
        key_values = [func]
        id_hashed = []
        self._prep_args_for_hash(key_values, args, id_hashed)
        key = CacheKey(tuple(key_values))
        for obj in id_hashed:
            weakref.finalize(obj, functools.partial(evict, FakeMode.cache, key))
        return key

    def dispatch(self, func, args, compute):
        key = self._cache_key(func, args)
        cache = FakeMode.cache
        entry = cache.get(key, None)  # corpus: sink
        if entry is None:
            entry = cache[key] = compute(func, args)
        return entry
