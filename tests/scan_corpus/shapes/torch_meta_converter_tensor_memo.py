import weakref


class Described:
    def __init__(self, id):
        self.id = id


class Converter:
    def __init__(self):
        self.tensor_memo = weakref.WeakValueDictionary()

    def set_tensor_memo(self, t: Described, v):
        self.tensor_memo[t.id] = v  # corpus: sink
