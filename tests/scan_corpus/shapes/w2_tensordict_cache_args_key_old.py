from collections import defaultdict
from functools import wraps


class cache:
    """A cache for TensorDictBase subclasses (older implementation)."""

    def __new__(cls, func):
        self = super().__new__(cls)
        return wraps(func)(self)

    def __init__(self, func):
        self.func = func
        self._self = func.__self__

    def __call__(self, *args, **kwargs):
        _self = self._self
        if not _self.is_locked:
            raise RuntimeError("Only locked tensordict can be cached.")
        cache = _self._cache
        if cache is None:
            cache = _self._cache = defaultdict(dict)
        cache = cache[self.func.__name__]
        key = tuple(args) + tuple(sorted(kwargs.items()))
        if key not in cache:
            out = self.func(*args, **kwargs)
            # we don't cache tensors (Tensor, MemmapTensor, KeyedJaggedTensor)
            if not isinstance(out, (Tensor, MemmapTensor, KeyedJaggedTensor)):
                cache[key] = out  # corpus: sink
        else:
            out = cache[key]
        return out
