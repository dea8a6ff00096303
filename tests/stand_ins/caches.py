"""Five patterns of tensor-keyed cache, each in a few lines, as their public
originals use them (not copies of them)."""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict

import torch


def _tensor_cache_key(t: torch.Tensor) -> tuple:
    """The pre-fix Helios key: where the tensor lives and how it is laid out."""
    return (t.data_ptr(), tuple(t.shape), t.stride(), t.dtype, t.device, t._version)


class PreFixFingerprintLRU:
    """A video model's cross-attention K/V cache before the fix: an LRU keyed by
    ``_tensor_cache_key`` alone."""

    key = staticmethod(_tensor_cache_key)

    def __init__(self, max_size: int = 2):
        self.max_size, self.entries = max_size, OrderedDict()

    def get(self, source):
        key = self.key(source)
        value = self.entries.get(key)
        if value is not None:
            self.entries.move_to_end(key)
        return value

    def put(self, source, value):
        key = self.key(source)
        self.entries[key] = value
        self.entries.move_to_end(key)
        while len(self.entries) > self.max_size:
            self.entries.popitem(last=False)

    def clear(self):
        self.entries.clear()

    def __len__(self):
        return len(self.entries)


class WeakrefSourceLRU(PreFixFingerprintLRU):
    """The merged fix: the same key, a weakref to the source beside the value, a
    dead one treated as a miss and dropped on the next insert."""

    def get(self, source):
        key = _tensor_cache_key(source)
        entry = self.entries.get(key)
        if entry is None:
            return None
        ref, value = entry
        if ref() is None:
            del self.entries[key]
            return None
        self.entries.move_to_end(key)
        return value

    def put(self, source, value):
        for stale in [k for k, (ref, _) in self.entries.items() if ref() is None]:
            del self.entries[stale]
        super().put(source, (weakref.ref(source), value))


class TensorKey:
    """A hashable stand-in for a tensor, as sparse kernels key their memo tables:
    the address and layout, a weakref to the tensor, no version; float32 only."""

    def __init__(self, t: torch.Tensor):
        assert t.dtype == torch.float32, "only float32 is supported"
        self.key = (t.data_ptr(), t.storage_offset(), tuple(t.shape), t.stride(), t.dtype)
        self._ref = weakref.ref(t)

    def __hash__(self):
        return hash(self.key)

    def __eq__(self, other):
        return isinstance(other, TensorKey) and self.key == other.key and self._ref() is not None


class TensorKeyMemo(PreFixFingerprintLRU):
    """A bounded memo table keyed by TensorKey."""

    key = TensorKey

    def put(self, source, value):
        self.entries.pop(self.key(source), None)  # the stored key object holds the old tensor's weakref
        super().put(source, value)


class PerRequestDict:
    """A per-request cross-attention cache: a plain dict, emptied at each request's
    bounds, unbounded in between, switched off while grad is enabled."""

    def __init__(self, max_size: int = 2):
        self.entries = {}

    def begin_request(self):
        self.entries = {}

    def end_request(self):
        self.entries = {}

    def get(self, source):
        if torch.is_grad_enabled():
            return None
        return self.entries.get(_tensor_cache_key(source))

    def put(self, source, value):
        if not torch.is_grad_enabled():
            self.entries[_tensor_cache_key(source)] = value

    def clear(self):
        self.entries = {}

    def __len__(self):
        return len(self.entries)


class PointerTable:
    """A kernel's table of device pointers, keyed by the weight's address: the value
    stands for "the tensor at this address"."""

    def __init__(self, max_size: int = 2):
        self.max_size, self.entries, self.lock = max_size, OrderedDict(), threading.Lock()

    def get(self, source):
        with self.lock:
            return self.entries.get(source.data_ptr())

    def put(self, source, value):
        with self.lock:
            self.entries[source.data_ptr()] = value
            self.entries.move_to_end(source.data_ptr())
            while len(self.entries) > self.max_size:
                self.entries.popitem(last=False)

    def clear(self):
        with self.lock:
            self.entries.clear()

    def __len__(self):
        return len(self.entries)
