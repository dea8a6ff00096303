"""Level L0: the pre-fix cache, keyed by the fingerprint alone.

Kept on purpose: it must reproduce the bug. Once a source is freed and its
address handed to a new tensor of the same layout, the new tensor's fingerprint
equals the old one and this cache returns the old value.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

from cache_impl.levels import Level
from cache_impl.keys import check_max_size, fingerprint


class FingerprintLRUCache:
    """LRU cache keyed by ``fingerprint(source)``. Guarantee level L0.

    No false hit only while the source that produced an entry stays alive and
    in place (within one live request). Thread-safe: one lock around each call.
    """

    level = Level.L0

    def __init__(self, max_size: int = 2):
        self.max_size = check_max_size(max_size)
        self._entries: OrderedDict = OrderedDict()
        self._lock = threading.Lock()

    def get(self, source):
        key = fingerprint(source)
        with self._lock:
            value = self._entries.get(key)
            if value is not None:
                self._entries.move_to_end(key)
            return value

    def put(self, source, value) -> None:
        key = fingerprint(source)
        with self._lock:
            self._entries[key] = value
            self._entries.move_to_end(key)
            while len(self._entries) > self.max_size:
                self._entries.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)
