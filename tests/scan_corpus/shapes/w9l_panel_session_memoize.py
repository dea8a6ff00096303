import hashlib

class _State:
    # stand-in for the panel.io.state.state singleton
    curdoc = None
    _memoize_cache = {}

state = _State()

def _int_to_bytes(i):
    num_bytes = (i.bit_length() + 8) // 8
    return i.to_bytes(num_bytes, "little", signed=True)

def _generate_hash(obj):
    if isinstance(obj, int):
        return _int_to_bytes(obj)
    if isinstance(obj, str):
        return obj.encode()
    h = hashlib.new("md5")
    for item in obj:
        h.update(_generate_hash(item))
    return h.digest()

def cache(func, per_session=False):
    def hash_func(*args, **kwargs):
        global func_hash
        func_hash = ("__main__", func.__name__)
        if per_session:
            func_hash += (id(state.curdoc),)
        func_hash = hashlib.sha256(_generate_hash(func_hash)).hexdigest()
        func_cache = state._memoize_cache.get(func_hash)  # corpus: sink
        if func_cache is None:
            func_cache = {}
            state._memoize_cache[func_hash] = func_cache  # corpus: sink
        return func_cache

    def wrapped_func(*args, **kwargs):
        func_cache = hash_func(*args, **kwargs)
        key = repr((args, kwargs))
        if key not in func_cache:
            func_cache[key] = func(*args, **kwargs)
        return func_cache[key]

    def clear(session_context=None):
        global func_hash
        state._memoize_cache.get(func_hash, {}).clear()

    if per_session and state.curdoc and state.curdoc.session_context:
        state.curdoc.on_session_destroyed(clear)
    return wrapped_func
