"""Level L1: the seed fix. A weakref to the source beside each value.

A dead weakref (source freed) turns an address-reuse collision into a miss. It
does not see a *live* source whose storage was swapped: the weakref stays
alive while the old address is freed and reused (see ``hardened``).
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict

from cache_impl.levels import Level
from cache_impl.keys import check_max_size, fingerprint


class SourceTensorLRUCache:
    """LRU cache keyed by ``fingerprint(source)``, guarded by a weakref. Level L1.

    Drop-in for the seed change: ``get(source)`` returns the value or ``None``,
    ``put(source, value)``, ``clear()``, ``len()``. Stale entries (dead source)
    are evicted lazily on lookup and proactively on insert; the proactive scan
    walks every entry, so ``put`` is O(n). Thread-safe: one lock around each
    call.
    """

    level = Level.L1

    def __init__(self, max_size: int = 2):
        self.max_size = check_max_size(max_size)
        self._entries: OrderedDict = OrderedDict()  # fingerprint -> (weakref, value)
        self._lock = threading.Lock()

    def get(self, source):
        key = fingerprint(source)
        with self._lock:
            # The lookup may meet a dead source's entry (its address reused): the check below
            # rejects and deletes it. The mark says so to ``address-reuse sanitize``, which
            # still reports the match if the entry is kept (docs/sanitize.md).
            entry = self._entries.get(key)  # address-reuse: validated
            if entry is None:
                return None
            ref, value = entry
            if ref() is None:  # source freed: its address now belongs to someone else
                del self._entries[key]
                return None
            self._entries.move_to_end(key)
            return value

    def put(self, source, value) -> None:
        key = fingerprint(source)
        with self._lock:
            for stale in [k for k, (ref, _) in self._entries.items() if ref() is None]:
                del self._entries[stale]
            self._entries[key] = (weakref.ref(source), value)
            self._entries.move_to_end(key)
            while len(self._entries) > self.max_size:
                self._entries.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)
