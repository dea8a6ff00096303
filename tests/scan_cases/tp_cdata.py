# expect: ARH001 L0
_pinned = {}


def pin(storage):
    key = storage._cdata
    if key not in _pinned:
        _pinned[key] = storage.pin_memory()
    return _pinned[key]
