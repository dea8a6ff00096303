import cffi

ffi = cffi.FFI()
_OGA = object.__getattribute__
_OSA = object.__setattr__


class _CFFIRing:
    __slots__ = ('ring_home', 'ring_to_obj', 'cleanup_func')

    def __init__(self, cleanup_func=None):
        self.ring_home = ffi.new("CPersistentRing*")
        self.cleanup_func = cleanup_func
        self.ring_to_obj = {}

    def ring_node_for(self, persistent_object, create=True):
        ring_data = _OGA(persistent_object, '_Persistent__ring')
        if ring_data is None:
            if not create:
                return None
            if self.cleanup_func:
                node = ffi.new('CPersistentRingCFFI*')
                # the node remembers the address; the ffi.gc object lives
                # exactly as long as the persistent object that owns it
                node.pobj_id = ffi.cast('uintptr_t', id(persistent_object))
                gc_ptr = ffi.gc(node, self.cleanup_func)
            else:
                node = ffi.new("CPersistentRing*")
                gc_ptr = None
            ring_data = (node, gc_ptr)
            _OSA(persistent_object, '_Persistent__ring', ring_data)
        return ring_data[0]

    def __contains__(self, pobj):
        node = self.ring_node_for(pobj, False)
        return node and node in self.ring_to_obj

    def add(self, pobj):
        node = self.ring_node_for(pobj)
        self.ring_to_obj[node] = pobj


Ring = _CFFIRing
