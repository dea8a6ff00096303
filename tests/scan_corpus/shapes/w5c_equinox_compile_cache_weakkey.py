import functools as ft
import types
import weakref

internal_caches = []


def _strip_wrapped_partial(fun):
    if hasattr(fun, "__wrapped__"):
        return _strip_wrapped_partial(fun.__wrapped__)
    if isinstance(fun, ft.partial):
        return _strip_wrapped_partial(fun.func)
    return fun


def _default_cache_key():
    assert False


def compile_cache(cacheable_fn):
    cache = weakref.WeakKeyDictionary()
    internal_caches.append(cache)

    def cached_fn_impl(leaves, treedef):
        return cacheable_fn(leaves, treedef)

    @ft.wraps(cacheable_fn)
    def wrapped_cacheable_fn(user_fn, *args, **kwargs):
        user_fn = _strip_wrapped_partial(user_fn)
        if type(user_fn) is types.FunctionType:
            cache_key = user_fn
        else:
            cache_key = _default_cache_key
        leaves = tuple(args)
        treedef = tuple(kwargs.items())
        try:
            cached_fn = cache[cache_key]  # corpus: sink
        except KeyError:
            cached_fn = cache[cache_key] = ft.lru_cache(maxsize=None)(cached_fn_impl)
        return cached_fn(leaves, treedef)

    return wrapped_cacheable_fn
