cached_backends = {}


class BackendOverride:
    def __init__(self, lookup):
        self.lookup = lookup
        self._backend_names = {}

    def parse(self, value_str):
        backend = self.lookup(value_str)
        cached_backends.setdefault(id(backend), backend)
        self._backend_names[id(backend)] = value_str  # corpus: sink
        return backend
