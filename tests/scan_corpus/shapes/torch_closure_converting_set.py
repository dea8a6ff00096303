class NestedFunction:
    def as_python_constant(self, _converting=None):
        self_id = id(self)
        if _converting is None:
            _converting = set()
        if self_id in _converting:  # corpus: sink
            raise RuntimeError("cycle in closures")
        _converting.add(self_id)
        return [c.as_python_constant(_converting) for c in self.closure]
