# expect: ARH001 L0
class PtrKey:
    def __init__(self, t):
        self.ptr = t.data_ptr()
        self.shape = tuple(t.shape)

    def __hash__(self):
        return hash((self.ptr, self.shape))

    def __eq__(self, other):
        return (self.ptr, self.shape) == (other.ptr, other.shape)


class Memo:
    def __init__(self):
        self.table = {}

    def lookup(self, t):
        return self.table.get(PtrKey(t))

    def store(self, t, value):
        self.table[PtrKey(t)] = value
