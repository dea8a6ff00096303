# expect: ARH001 L1
import weakref
from collections import OrderedDict

import torch


def _tensor_cache_key(t: torch.Tensor):
    return (t.data_ptr(), tuple(t.shape), t.stride(), t.dtype, t.device, t._version)


class GuardedKVCache:
    def __init__(self):
        self._entries = OrderedDict()

    def get(self, source):
        entry = self._entries.get(_tensor_cache_key(source))
        if entry is None:
            return None
        ref, value = entry
        return value if ref() is not None else None

    def put(self, source, value):
        self._entries[_tensor_cache_key(source)] = (weakref.ref(source), value)
