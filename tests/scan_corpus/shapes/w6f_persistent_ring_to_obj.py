_OGA = object.__getattribute__
_OSA = object.__setattr__


class _FFI:
    def new(self, ctype):
        return object()


ffi = _FFI()


class _CFFIRing:
    __slots__ = ('ring_home', 'ring_to_obj', 'cleanup_func')

    def __init__(self, cleanup_func=None):
        self.ring_home = ffi.new("CPersistentRing*")
        self.cleanup_func = cleanup_func
        # strong reference to the persistent object: it (and the cffi node
        # it owns) stays alive while it is in this dict
        self.ring_to_obj = {}

    def ring_node_for(self, persistent_object, create=True):
        ring_data = _OGA(persistent_object, '_Persistent__ring')
        if ring_data is None:
            if not create:
                return None
            node = ffi.new("CPersistentRing*")
            ring_data = (node, None)
            _OSA(persistent_object, '_Persistent__ring', ring_data)
        return ring_data[0]

    def __contains__(self, pobj):
        node = self.ring_node_for(pobj, False)
        return node and node in self.ring_to_obj

    def add(self, pobj):
        node = self.ring_node_for(pobj)
        self.ring_to_obj[node] = pobj  # corpus: sink

    def delete(self, pobj):
        its_node = self.ring_node_for(pobj, False)
        our_obj = self.ring_to_obj.pop(its_node, self)
        return our_obj is not self
