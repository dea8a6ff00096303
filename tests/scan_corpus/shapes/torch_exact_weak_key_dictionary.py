import weakref


class ExactWeakKeyDictionary:
    def __init__(self):
        self.values = {}
        self.refs = {}

    def get(self, key, default=None):
        return self.values.get(id(key), default)

    def __setitem__(self, key, value):
        idx = id(key)
        if idx not in self.refs:
            self.refs[idx] = weakref.ref(key, lambda ref: self._remove_id(idx))
        self.values[idx] = value  # corpus: sink

    def _remove_id(self, idx):
        self.values.pop(idx, None)
        self.refs.pop(idx, None)
