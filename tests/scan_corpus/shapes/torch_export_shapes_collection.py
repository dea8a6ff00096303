class ShapesByInput:
    def __init__(self):
        self._shapes = {}

    def __setitem__(self, t, shape):
        t_id = id(t)
        if t_id in self._shapes:
            if self._shapes[t_id] != shape:
                raise AssertionError("shape mismatch")
        else:
            self._shapes[id(t)] = shape  # corpus: sink

    def __getitem__(self, t):
        return self._shapes[id(t)]
