# opt_einsum/sharing.py: to_backend_cache_wrap memoizes backend conversion (to_cupy, to_torch) by id
import contextlib
import functools
import threading
from collections import defaultdict

_SHARING_STACK = defaultdict(list)


def currently_sharing():
    return threading.get_ident() in _SHARING_STACK


def get_sharing_cache():
    return _SHARING_STACK[threading.get_ident()][-1]


@contextlib.contextmanager
def shared_intermediates(cache=None):
    if cache is None:
        cache = {}
    _SHARING_STACK[threading.get_ident()].append(cache)
    try:
        yield cache
    finally:
        tid = threading.get_ident()
        _SHARING_STACK[tid].pop()
        if not _SHARING_STACK[tid]:
            del _SHARING_STACK[tid]


def _memoize(key, fn, *args, **kwargs):
    cache = get_sharing_cache()
    if key in cache:  # corpus: sink
        return cache[key]  # corpus: sink
    result = fn(*args, **kwargs)
    cache[key] = result  # corpus: sink
    return result


def to_backend_cache_wrap(to_backend=None, constants=False):
    if to_backend is None:
        return functools.partial(to_backend_cache_wrap, constants=constants)

    def cached_to_backend(array):
        if not currently_sharing():
            return to_backend(array)

        key = to_backend.__name__, id(array)  # corpus: sink
        return _memoize(key, to_backend, array)

    return cached_to_backend


@to_backend_cache_wrap
def to_cupy(array):
    import cupy
    return cupy.asarray(array)
