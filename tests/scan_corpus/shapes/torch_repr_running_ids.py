_repr_running: set[int] = set()


def generic_repr(obj, tx):
    obj_id = id(obj)
    if obj_id in _repr_running:
        return "..."
    _repr_running.add(obj_id)  # corpus: sink
    try:
        return obj.repr_impl(tx)
    finally:
        _repr_running.discard(obj_id)
