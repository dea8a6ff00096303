# expect: ARH001 L3
import weakref

import torch


def fingerprint(t: torch.Tensor):
    return (t.data_ptr(), t.shape, t.stride(), t.dtype, t._version)


class PerRequestCache:
    def __init__(self):
        self._entries = {}

    def begin_request(self):
        self._entries.clear()

    def end_request(self):
        self._entries.clear()

    def get(self, source):
        entry = self._entries.get(fingerprint(source))
        if entry is None:
            return None
        ref, value = entry
        live = ref()
        if live is None or fingerprint(live) != fingerprint(source):
            return None
        return value

    def put(self, source, value):
        self._entries[fingerprint(source)] = (weakref.ref(source), value)
