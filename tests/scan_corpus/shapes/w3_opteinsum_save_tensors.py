# opt_einsum/sharing.py: shared_intermediates cache; _save_tensors pins operands by id
import contextlib
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


def _save_tensors(*tensors):
    cache = get_sharing_cache()
    for tensor in tensors:
        cache["tensor", id(tensor)] = tensor  # corpus: sink


def _memoize(key, fn, *args, **kwargs):
    cache = get_sharing_cache()
    if key in cache:  # corpus: sink
        return cache[key]  # corpus: sink
    result = fn(*args, **kwargs)
    cache[key] = result  # corpus: sink
    return result


def tensordot_cache_wrap(tensordot):
    def cached_tensordot(x, y, axes=2, backend="numpy"):
        if not currently_sharing():
            return tensordot(x, y, axes, backend=backend)
        _save_tensors(x, y)
        axes = tuple(axes[0]), tuple(axes[1])
        key = "tensordot", backend, id(x), id(y), axes  # corpus: sink
        return _memoize(key, tensordot, x, y, axes, backend=backend)

    return cached_tensordot
