# expect: ARH001 L0
# The mapping arrives as a parameter; the callers pass a global, so it lasts (reported on it).
_GLOBAL_CACHE = {}


def lookup(cache, t):
    return cache.get(t.data_ptr())


def store(cache, t, value):
    cache[t.data_ptr()] = value


def cached_square(t):
    hit = lookup(_GLOBAL_CACHE, t)
    if hit is None:
        hit = t * t
        store(_GLOBAL_CACHE, t, hit)
    return hit
