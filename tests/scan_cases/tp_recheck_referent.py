# expect: ARH001 L2
import weakref

import torch


def fingerprint(t: torch.Tensor):
    return (t.data_ptr(), t.shape, t.stride(), t.dtype, t._version)


class RecheckingCache:
    def __init__(self):
        self._entries = {}

    def get(self, source):
        key = fingerprint(source)
        entry = self._entries.get(key)
        if entry is None:
            return None
        ref, value = entry
        live = ref()
        if live is None or fingerprint(live) != key:
            del self._entries[key]
            return None
        return value

    def put(self, source, value):
        self._entries[fingerprint(source)] = (weakref.ref(source), value)
