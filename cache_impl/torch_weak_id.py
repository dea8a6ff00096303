"""Level L2 by identity: PyTorch's own ``torch.utils.weak.WeakIdKeyDictionary``.

Keyed by the source *object*, held weakly: a freed source's entry is removed by
its weakref callback, so a reused address can never match. The fingerprint
and the storage identity stored beside the value are rechecked on every hit,
which catches in-place updates and storage swaps of the same object, also one
rebound back to a fresh storage at its old address. The price is the hit rate: a new
view object of the same live tensor (``src[:]``, ``src.detach()``) is a
different key and misses.
"""

from __future__ import annotations

import threading

from torch.utils.weak import WeakIdKeyDictionary, _IterationGuard

from cache_impl.levels import Level
from cache_impl.keys import check_max_size, fingerprint, pin_storage, storage_id


class WeakIdCache:
    """LRU cache keyed by source identity (weakly), fingerprint and storage rechecked on hit.
    Guarantee level L2. Misses on new view objects of a cached tensor.
    Thread-safe: one lock around each call."""

    level = Level.L2

    def __init__(self, max_size: int = 2):
        self.max_size = check_max_size(max_size)
        self._entries = WeakIdKeyDictionary()  # source -> (fingerprint, storage ref, value), oldest first
        self._lock = threading.Lock()

    def get(self, source):
        key = fingerprint(source)
        with self._lock:
            item = self._entries.get(source)
            if item is None:
                return None
            del self._entries[source]
            fingerprint_then, storage, value = item
            # A source rebound to a fresh storage at its old address meets its old key here:
            # rejected, and its entry, taken out above, is not put back: a validated lookup.
            if fingerprint_then != key or storage_id(source) != storage.cdata:  # address-reuse: validated
                return None  # same object, but updated in place, relaid or rebound
            self._entries[source] = item  # re-insert: most recently used goes last
            return value

    def put(self, source, value) -> None:
        key = fingerprint(source)
        with self._lock:
            self._entries.pop(source, None)
            self._entries[source] = (key, pin_storage(source), value)
            # A source dying in another thread runs a removal callback; inside the
            # dictionary's own iteration guard that removal waits, so picking the
            # oldest key never meets "dictionary changed size during iteration".
            with _IterationGuard(self._entries):
                while len(self._entries.data) > self.max_size:
                    del self._entries.data[next(iter(self._entries.data))]

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)
