import weakref

_jit_caching_layer = weakref.WeakKeyDictionary()


def try_get_jit_cached_function(key):
    return _jit_caching_layer.get(key, None)


def set_jit_function_cache(key, value):
    _jit_caching_layer[key] = value.qualified_name  # corpus: sink
