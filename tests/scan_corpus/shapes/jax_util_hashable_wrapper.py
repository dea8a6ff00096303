class HashableWrapper:
    def __init__(self, x):
        self.x = x
        try:
            self.hash = hash(x)
        except TypeError:
            self.hash = None

    def __hash__(self):
        return self.hash if self.hash is not None else id(self.x)  # corpus: sink

    def __eq__(self, other):
        if not isinstance(other, HashableWrapper):
            return False
        return self.x == other.x if self.hash is not None else self.x is other.x
