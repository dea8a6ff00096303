import functools

_ID_MAP = {}


@functools.lru_cache(maxsize=1024)  # corpus: sink
def cache_key_by_id(obj_id: int):
    fn, key = _ID_MAP[obj_id]
    return (fn, key)


def cache_key(obj):
    obj_id = id(obj)
    if obj_id not in _ID_MAP:
        return None
    fn, key = cache_key_by_id(obj_id)
    if obj is not fn:
        return None
    return key
