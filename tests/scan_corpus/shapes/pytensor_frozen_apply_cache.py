import weakref


class FrozenApply:
    _cache = weakref.WeakValueDictionary()

    def __new__(cls, op, inputs, output_types):
        key = (op, tuple(i.signature() if hasattr(i, "signature") else id(i) for i in inputs), output_types)
        cached = cls._cache.get(key)  # corpus: sink
        if cached is not None:
            return cached
        instance = object.__new__(cls)
        instance.op, instance.inputs = op, inputs
        cls._cache[key] = instance
        return instance
