import weakref
from functools import lru_cache


class AsKey:
    def __init__(self, obj):
        self._ref = weakref.ref(obj)
        self.key = (obj.data_ptr(), obj.storage_offset(), obj.shape, obj.stride(), obj.dtype)
        self._hash = hash(self.key)

    def __hash__(self):
        return self._hash

    def __eq__(self, other):
        if self._ref() is None or other._ref() is None:
            return self is other
        return self.key == other.key


@lru_cache(maxsize=32)  # corpus: sink
def indices_data(fmt, blocksize, tensor_as_key):
    return tensor_as_key._ref().crow_indices().diff()


def run(t, fmt):
    return indices_data(fmt, 16, AsKey(t))
