# expect: ARH004 L0
# A key class offered to other modules; nothing here uses it as a key.


class AddressKey:
    def __init__(self, t):
        self.key = (t.data_ptr(), t.storage_offset(), tuple(t.shape), t.dtype)

    def __hash__(self):
        return hash(self.key)

    def __eq__(self, other):
        return isinstance(other, AddressKey) and self.key == other.key
