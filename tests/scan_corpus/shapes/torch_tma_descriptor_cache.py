class TMADescriptor:
    _CACHE = {}

    @classmethod
    def _create_impl(cls, tensor, meta):
        return cls()

    @classmethod
    def create(cls, tensor, meta):
        key = (id(tensor), meta)
        if key not in cls._CACHE:  # corpus: sink
            cls._CACHE[key] = cls._create_impl(tensor, meta)
        return cls._CACHE[key]
