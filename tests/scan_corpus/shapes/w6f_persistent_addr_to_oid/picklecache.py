import ctypes

from ring import Ring


class _WeakValueDictionary:
    def __init__(self):
        self._data = {}
        self._addr_to_oid = {}
        self._cast = ctypes.cast
        self._py_object = ctypes.py_object

    def _save_addr(self, oid, obj):
        i = id(obj)
        self._addr_to_oid[i] = oid  # corpus: sink
        return i

    def _from_addr(self, addr):
        return self._cast(addr, self._py_object).value

    def cleanup_hook(self, cdata):
        # called by ffi.gc when the persistent object is deallocated
        try:
            addr_to_oid = self._addr_to_oid
        except AttributeError:
            return
        oid = addr_to_oid.pop(cdata.pobj_id, None)
        self._data.pop(oid, None)

    def __setitem__(self, key, value):
        addr = self._save_addr(key, value)
        self._data[key] = addr


class PickleCache:
    def __init__(self, jar):
        self.jar = jar
        self.data = _WeakValueDictionary()
        self.ring = Ring(self.data.cleanup_hook)

    def __setitem__(self, oid, value):
        self.data[oid] = value
        if value._p_state != -1 and value not in self.ring:
            self.ring.add(value)
        elif self.data.cleanup_hook:
            # Ensure we begin monitoring for ``value`` to be deallocated.
            self.ring.ring_node_for(value)
