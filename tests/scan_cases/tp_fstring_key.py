# expect: ARH001 L0
_encoded = {}


def encode(t, encoder):
    name = f"{t.data_ptr():x}-{tuple(t.shape)}"
    if name in _encoded:
        return _encoded[name]
    out = _encoded[name] = encoder(t)
    return out
