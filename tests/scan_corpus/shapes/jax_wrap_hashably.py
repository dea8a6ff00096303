class WrapHashably:
    def __init__(self, val):
        self.val = val
        try:
            self.hash = hash(val)
            self.hashable = True
        except TypeError:
            self.hash = id(val)  # corpus: sink
            self.hashable = False

    def __hash__(self):
        return self.hash

    def __eq__(self, other):
        if not isinstance(other, WrapHashably):
            return False
        if self.hashable and other.hashable:
            return self.val == other.val
        return self.val is other.val
