# expect: ARH001 L0
def _ptr(t):
    return t.data_ptr()


def _layout_key(t):
    return (_ptr(t), tuple(t.shape), t.dtype)


_transposed = {}


def transposed(t):
    key = _layout_key(t)
    if key not in _transposed:
        _transposed[key] = t.t().contiguous()
    return _transposed[key]
