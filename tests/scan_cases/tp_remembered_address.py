# The last projected tensor's address kept in a global: a new tensor at that address gets its result.
# expect: ARH005 L0
_last_ptr = None
_last_out = None


def project(t, weight):
    global _last_ptr, _last_out
    ptr = t.data_ptr()
    if ptr == _last_ptr:
        return _last_out
    _last_ptr, _last_out = ptr, t @ weight
    return _last_out
