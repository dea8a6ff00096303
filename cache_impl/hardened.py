"""Levels L2 and L3: the weakref guard plus a check that the referent is unchanged.

The seed fix trusts any live referent. But a live tensor can have its storage
swapped (``src.set_(other)``, ``src.data = other``): the Python object and its
weakref live on while the old address is freed and handed to the next request.
It can even be rebound *back* to a fresh storage at its old address, with the
same layout and version: every fingerprint field matches again. So on a hit
this design checks that the referent *still* has the key's fingerprint and
still uses the very storage it had at insert time, identified by the
StorageImpl that a storage weak reference keeps from being reused. A dead
source's entry is dropped by its weakref callback when the source dies, not by
scanning on every insert, so ``put`` costs the same at any size and a lookup
rarely meets a stale entry.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict

from cache_impl.levels import Level
from cache_impl.keys import check_max_size, fingerprint, pin_storage, storage_id


class _SourceRef(weakref.ref):
    """A weakref to the source that carries its cache entry."""

    # storage: a StorageWeakRef pinning the identity of the source's storage;
    # storage_id: that identity, compared on every hit.
    __slots__ = ("key", "value", "source_id", "storage", "storage_id")


class HardenedCache:
    """LRU cache keyed by fingerprint, guarded by a weakref *and* a recheck of the
    referent's fingerprint. Guarantee level L2.

    No false hit when a source is freed and its address reused, nor when a live
    source's storage is swapped or rebound (even back to its old address). It
    cannot see content rewritten in place with no version bump (inference-mode
    tensors, a storage resized to zero and regrown, writes through an alias with
    its own version counter); see :class:`RequestScopedCache`.

    Fast path: when the lookup tensor *is* the cached source (the usual case
    across denoise steps), an identity map finds the entry and only the fields
    that can change on a live tensor are compared. Thread-safe: every insert
    and removal happens under one lock (a weakref callback that finds it busy
    leaves its entry for the next call), and the lock-free fast path only
    reorders.
    """

    level = Level.L2

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
        # is (almost always) the cached source. id() only finds a candidate, since
        # ids are reused; what decides is the same storage, by identity, with the
        # key's fingerprint. The entry pins its StorageImpl, so no other storage can
        # ever have that identity: even a dead source's entry met through a reused
        # id can only match a tensor on that very storage, layout and version.
        ref = self._by_id.get(id(source))
        if ref is not None:
            # fingerprint(source) == ref.key, field by field without building the
            # tuple (that is the seed fix's cost). Only these can change on a live
            # tensor (``.data =`` changes any of them but the version); the device is
            # implied by the address; ``version`` is None only for inference
            # tensors, and a tensor cannot become one.
            ptr, shape, stride, dtype, _device, version, conj, neg = ref.key
            if (source.data_ptr() == ptr and (version is None or source._version == version)
                    and source.dtype is dtype and source.shape == shape and source.stride() == stride
                    and storage_id(source) == ref.storage_id
                    and source.is_conj() is conj and source.is_neg() is neg):
                try:
                    self._recency.move_to_end(id(ref))
                except KeyError:
                    pass  # evicted by another thread meanwhile; the value is still this source's
                return ref.value
        key = fingerprint(source)
        if self._entries.get(key) is None:
            return None  # a plain miss needs no lock
        with self._lock:
            if self._dead:
                self._drop_dead()
            # Read again under the lock: another thread may have evicted the entry.
            ref = self._entries.get(key)
            if ref is None:
                return None
            if not _unchanged(ref, key, source):
                self._forget(ref)  # freed, or alive with its storage swapped or rebound
                return None
            self._recency.move_to_end(id(ref))
            return ref.value

    def put(self, source, value) -> None:
        key = fingerprint(source)
        ref = _SourceRef(source, self._source_died)
        ref.key, ref.value, ref.source_id = key, value, id(source)
        ref.storage = pin_storage(source)
        ref.storage_id = ref.storage.cdata
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


def _unchanged(ref: _SourceRef, key, source) -> bool:
    """Is the entry's source alive, with the key's fingerprint, on the storage it
    had at insert time? ``source`` (whose fingerprint is ``key``) may be the
    referent itself or another view of the same memory."""
    referent = ref()
    if referent is None:
        return False  # freed: its address may belong to someone else now
    if referent is not source:
        try:
            if fingerprint(referent) != key:
                return False  # alive, but moved, relaid or updated in place
        except TypeError:
            return False  # rebound to something that has no key at all
    return storage_id(referent) == ref.storage_id  # not rebound away and back


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

    level = Level.L3

    def begin_request(self) -> None:
        self.clear()

    def end_request(self) -> None:
        self.clear()
