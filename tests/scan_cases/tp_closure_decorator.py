# expect: ARH001 L0
# The decorator returns the wrapper, so `cache` outlives each call.
import functools


def memoize_on_input(fn):
    cache = {}

    @functools.wraps(fn)
    def wrapper(x):
        key = (x.data_ptr(), x.shape)
        if key not in cache:
            cache[key] = fn(x)
        return cache[key]

    return wrapper
