import ctypes


class ObjectRef:
    def __init__(self, ptr):
        self._ptr = ptr

    def __eq__(self, other):
        if not hasattr(other, "_ptr"):
            return False
        return ctypes.addressof(self._ptr[0]) == ctypes.addressof(other._ptr[0])

    def __hash__(self):
        return hash(ctypes.cast(self._ptr, ctypes.c_void_p).value)  # corpus: sink
