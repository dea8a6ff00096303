import hashlib
import unittest.mock

class _State:  # stand-in for the panel.io.state.state singleton
    _memoize_cache = {}

state = _State()

def _int_to_bytes(i):
    num_bytes = (i.bit_length() + 8) // 8
    return i.to_bytes(num_bytes, "little", signed=True)

def _container_hash(obj):
    h = hashlib.new("md5")
    for item in obj:
        h.update(_generate_hash(item))
    return h.digest()

_hash_funcs = {
    int: _int_to_bytes,
    (list, tuple, dict): _container_hash,
    unittest.mock.Mock: lambda obj: _int_to_bytes(id(obj)),
}

def _generate_hash(obj):
    for otype, hash_func in _hash_funcs.items():
        if isinstance(obj, otype):
            return hash_func(obj)
    return repr(obj).encode()

def compute_hash(func, hash_funcs, args, kwargs):
    hasher = hashlib.new("md5")
    if args:
        hasher.update(_generate_hash(args))
    return hasher.hexdigest()

def cache(func):
    def wrapped_func(*args, **kwargs):
        hash_value = compute_hash(func, {}, args, kwargs)
        func_hash = hashlib.sha256(_generate_hash(("__main__", func.__name__))).hexdigest()
        func_cache = state._memoize_cache.setdefault(func_hash, {})
        if hash_value in func_cache:  # corpus: sink
            return func_cache[hash_value][0]
        ret = func(*args, **kwargs)
        func_cache[hash_value] = (ret, 0, 0, 0)
        return ret
    return wrapped_func
