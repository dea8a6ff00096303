# expect: ARH001 L0
# The pre-fix shape: the key is built in a helper of the same module.
from collections import OrderedDict

import torch


def _tensor_cache_key(t: torch.Tensor):
    return (t.data_ptr(), tuple(t.shape), t.stride(), t.dtype, t.device, t._version)


class KVCache:
    def __init__(self, max_size=2):
        self.max_size = max_size
        self._entries = OrderedDict()

    def get(self, source):
        key = _tensor_cache_key(source)
        value = self._entries.get(key)
        if value is not None:
            self._entries.move_to_end(key)
        return value

    def put(self, source, value):
        self._entries[_tensor_cache_key(source)] = value
        while len(self._entries) > self.max_size:
            self._entries.popitem(last=False)
