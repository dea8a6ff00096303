"""Levels L2 and L3: the weakref guard plus a check that the referent is unchanged.

The seed fix trusts any live referent. But a live tensor can have its storage
swapped (``src.set_(other)``, ``src.data = other``): the Python object and its
weakref live on while the old address is freed and handed to the next request.
So on a hit this design checks that the referent *still* has the key's
fingerprint. A dead source's entry is dropped by its weakref callback when the
source dies, not by scanning on every insert, so ``put`` costs the same at any
size and a lookup rarely meets a stale entry.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict

from cache_impl.keys import check_max_size, fingerprint


class _SourceRef(weakref.ref):
    """A weakref to the source that carries its cache entry."""

    __slots__ = ("key", "value", "source_id")


class HardenedCache:
    """LRU cache keyed by fingerprint, guarded by a weakref *and* a recheck of the
    referent's fingerprint. Guarantee level L2.

    No false hit when a source is freed and its address reused, nor when a live
    source's storage is swapped, resized or rebound. It cannot see content
    rewritten in place with no version bump (inference-mode tensors); see
    :class:`RequestScopedCache`.

    Fast path: when the lookup tensor *is* the cached source (the usual case
    across denoise steps), an identity map finds the entry and only the fields
    that can change on a live tensor are compared. Thread-safe: every insert
    and removal happens under one lock (a weakref callback that finds it busy
    leaves its entry for the next call), and the lock-free fast path only
    reorders.
    """

    level = "L2"

    def __init__(self, max_size: int = 2):
        self.max_size = check_max_size(max_size)
        self._entries: dict = {}  # fingerprint -> _SourceRef
        # Recency, oldest first, keyed by id(ref): an int hashes for free, a
        # fingerprint tuple does not, and the fast path reorders on every hit.
        self._recency: OrderedDict = OrderedDict()  # id(ref) -> _SourceRef
        self._by_id: dict = {}  # id(source) -> _SourceRef, for the identity fast path
        self._dead: list = []  # refs whose source died while the lock was busy
        self._lock = threading.Lock()
        cache = weakref.ref(self)  # the callback must not keep the cache alive

        def source_died(ref: _SourceRef) -> None:
            # Runs wherever the source dies: any thread, or inside this cache's own
            # call (GC). Never wait for the lock: if it is busy, leave the ref for
            # the next call that holds it.
            this = cache()
            if this is None:
                return
            if this._lock.acquire(blocking=False):
                try:
                    this._forget(ref)
                finally:
                    this._lock.release()
            else:
                this._dead.append(ref)

        self._source_died = source_died

    def get(self, source):
        # Fast path, lock-free (each dict operation is atomic): the lookup tensor
        # *is* the cached source and still has the key's fingerprint. id() alone
        # proves nothing (ids are reused too); `ref() is source` proves identity.
        ref = self._by_id.get(id(source))
        if ref is not None and ref() is source:
            # fingerprint(source) == ref.key, field by field without building the
            # tuple (that is the seed fix's cost). Only these fields can change on
            # a live tensor; the device is implied by the address; ``version`` is
            # None only for inference tensors, and a tensor cannot become one.
            ptr, shape, stride, dtype, _device, version = ref.key
            if (source.data_ptr() == ptr and (version is None or source._version == version)
                    and source.dtype is dtype and source.shape == shape and source.stride() == stride):
                try:
                    self._recency.move_to_end(id(ref))
                except KeyError:
                    pass  # evicted by another thread meanwhile; the value is still this source's
                return ref.value
        key = fingerprint(source)
        ref = self._entries.get(key)
        if ref is None:
            return None  # a plain miss needs no lock
        with self._lock:
            if self._dead:
                self._drop_dead()
                ref = self._entries.get(key)
                if ref is None:
                    return None
            referent = ref()
            if referent is None or (referent is not source and fingerprint(referent) != key):
                self._forget(ref)  # freed, or alive with its storage swapped
                return None
            self._recency.move_to_end(id(ref))
            return ref.value

    def put(self, source, value) -> None:
        key = fingerprint(source)
        ref = _SourceRef(source, self._source_died)
        ref.key, ref.value, ref.source_id = key, value, id(source)
        with self._lock:
            if self._dead:
                self._drop_dead()
            old = self._entries.get(key)
            if old is not None:
                self._forget(old)
            self._entries[key] = ref
            self._recency[id(ref)] = ref
            self._by_id[ref.source_id] = ref
            while len(self._recency) > self.max_size:
                self._forget(self._recency.popitem(last=False)[1])

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._recency.clear()
            self._by_id.clear()
            self._dead.clear()

    def __len__(self) -> int:
        with self._lock:
            if self._dead:
                self._drop_dead()
            return len(self._recency)

    def _forget(self, ref: _SourceRef) -> None:
        """Remove one entry from every map (caller holds the lock). Each step is
        one atomic dict operation, so the lock-free fast path never sees a torn map."""
        if self._entries.get(ref.key) is ref:
            del self._entries[ref.key]
        self._recency.pop(id(ref), None)  # ref is alive here, so its id is its own
        if self._by_id.get(ref.source_id) is ref:
            del self._by_id[ref.source_id]

    def _drop_dead(self) -> None:
        """Remove entries whose source died (caller holds the lock)."""
        while self._dead:
            self._forget(self._dead.pop())


class RequestScopedCache(HardenedCache):
    """:class:`HardenedCache` that is also told where a request begins and ends.
    Guarantee level L3 when the caller brackets each request with
    ``begin_request()`` / ``end_request()`` (L2 without them).

    Entries never outlive the request that made them, so a persistent input
    buffer rewritten in place under ``torch.inference_mode()`` (no version
    counter, same address, live referent: invisible to any fingerprint) cannot
    serve one request's value to the next. Concurrent requests sharing one
    instance only cost each other hits, never correctness.
    """

    level = "L3"

    def begin_request(self) -> None:
        self.clear()

    def end_request(self) -> None:
        self.clear()
