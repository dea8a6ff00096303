# expect: ARH004 L0
# A key class that hashes by the address a ctypes cast makes in __hash__ (llvmlite's ObjectRef):
# the address is found where it is made, not from the parameter's name.
import ctypes


class ObjectRef:
    def __init__(self, handle):
        self._handle = handle

    def __eq__(self, other):
        return ctypes.addressof(self._handle[0]) == ctypes.addressof(other._handle[0])

    def __hash__(self):
        return hash(ctypes.cast(self._handle, ctypes.c_void_p).value)
