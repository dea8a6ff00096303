# expect: ARH002 L1
import weakref
from functools import lru_cache


class SparseKey:
    def __init__(self, t):
        self._ref = weakref.ref(t)
        self.key = (t.data_ptr(), t.storage_offset(), t.shape, t.stride(), t.dtype)

    def __hash__(self):
        return hash(self.key)

    def __eq__(self, other):
        if self._ref() is None or other._ref() is None:
            return self is other
        return self.key == other.key


@lru_cache(maxsize=32)
def _block_indices(n_blocks, wrapped):
    t = wrapped._ref()
    return t.nonzero()


def block_indices(t, n_blocks):
    return _block_indices(n_blocks, SparseKey(t))
