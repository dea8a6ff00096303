"""Levels L2 and L3: the weakref guard plus a check that the referent is unchanged.

The seed fix trusts any live referent. But a live tensor can have its storage
swapped (``src.set_(other)``, ``src.data = other``): the Python object and its
weakref live on while the old address is freed and handed to the next request.
It can even be rebound *back* to a fresh storage at its old address, with the
same layout and version: every fingerprint field matches again. So on a hit
this design checks that the referent *still* has the key's fingerprint and
still uses the very storage it had at insert time, identified by the
StorageImpl that a storage weak reference keeps from being reused.

An entry lives as long as the source's *storage*, not the Python object it was
put with: models often hand the cache a new view of the same tensor at every
step (``x.view(...)`` in LTX-Video's forward) and drop the old one at the end of
the step. The view's weakref dies, the storage does not, and the next step's
view, on that storage with the same fingerprint, must still hit. When the source
object dies, its entry is dropped if that object held the storage's last
reference (or, settled at the next call, if the storage died since), else kept
for views that come later (the StorageWeakRef keeps only the
StorageImpl's bookkeeping, never the data). So ``put`` costs the same at any size.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict

import torch

from cache_impl.levels import Level
from cache_impl.keys import check_max_size, fingerprint, pin_storage, storage_id


class _SourceRef(weakref.ref):
    """A weakref to the source that carries its cache entry."""

    # storage: a StorageWeakRef pinning the identity of the source's storage;
    # fast: what the identity fast path compares, flat (see HardenedCache.get);
    # used: hit since it last got a second chance (recency, see HardenedCache.put).
    __slots__ = ("key", "value", "source_id", "storage", "fast", "used")


class HardenedCache:
    """LRU cache keyed by fingerprint, guarded by storage identity *and* a recheck of
    the referent's fingerprint while it lives. Guarantee level L2.

    No false hit when a source is freed and its address reused, nor when a live
    source's storage is swapped or rebound (even back to its old address). It
    cannot see content rewritten in place with no version bump (inference-mode
    tensors, a storage resized to zero and regrown, writes through an alias with
    its own version counter); see :class:`RequestScopedCache`. A new view of a
    live source hits, even after the object it was put with is gone.

    Fast path: when the lookup tensor *is* the cached source (the usual case
    across denoise steps), an identity map finds the entry and only the fields
    that can change on a live tensor are compared. Thread-safe: every insert
    and removal happens under one lock (a weakref callback that finds it busy, or
    whose storage lives on, leaves its entry for the next call), and the lock-free
    fast path only reorders.
    """

    level = Level.L2

    def __init__(self, max_size: int = 2):
        self.max_size = check_max_size(max_size)
        self._entries: dict = {}  # fingerprint -> _SourceRef
        # Insertion order, oldest first, keyed by id(ref) (an int hashes for free).
        # A hit only marks its entry used; eviction gives used entries a second
        # chance (see put), so the lock-free fast path writes one flag instead of
        # reordering a shared map.
        self._recency: OrderedDict = OrderedDict()  # id(ref) -> _SourceRef
        self._by_id: dict = {}  # id(source) -> _SourceRef, for the identity fast path
        self._dead: list = []  # refs whose source died while the lock was busy
        self._lock = threading.Lock()
        cache = weakref.ref(self)  # the callback must not keep the cache alive

        def source_died(ref: _SourceRef) -> None:
            # Runs wherever the source dies: any thread, or inside this cache's own
            # call (GC), before the dying tensor lets go of its storage. Its id leaves
            # the identity map at once, before any other object can be given that id
            # (one atomic dict operation, no lock needed: no live object has this id now),
            # so that no lookup ever meets a dead source's id. If it holds
            # the storage's last reference, the entry goes now (forgetting is always
            # safe: at worst a lost hit). Otherwise, or if the lock is busy (never
            # wait for it), queue the ref for the next call that holds the lock.
            this = cache()
            if this is None:
                return
            if this._by_id.get(ref.source_id) is ref:
                this._by_id.pop(ref.source_id, None)  # clear() in another thread may have been first
            if _last_holder(ref.storage) and this._lock.acquire(blocking=False):
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
            # tensors, and a tensor cannot become one. The conj bit changes the
            # values of complex tensors only (a real tensor's conjugate is itself):
            # ``conj`` is None for real ones.
            ptr, version, dtype, shape, stride, storage, neg, conj = ref.fast
            # A source rebound to a fresh storage at its old address meets its old address here;
            # the storage check rejects it (docs/sanitize.md).
            if (source.data_ptr() == ptr  # address-reuse: validated
                    and (version is None or source._version == version)
                    and source.dtype is dtype and source.shape == shape and source.stride() == stride
                    and storage_id(source) == storage and source.is_neg() is neg
                    and (conj is None or source.is_conj() is conj)):
                ref.used = True  # evicted by another thread meanwhile? the value is still this source's
                return ref.value
            if storage_id(source) != storage:  # rebound: this entry can never be this source's again
                with self._lock:
                    self._forget(ref)
        key = fingerprint(source)
        # This lookup can meet the entry of a source that died while a view kept its
        # storage, the storage having died since: _unchanged rejects it and _forget drops
        # it. The mark tells ``address-reuse sanitize`` so; it still reports the match if
        # the entry were kept (docs/sanitize.md).
        ref = self._entries.get(key)  # address-reuse: validated
        if ref is None:
            return None  # a plain miss needs no lock
        with self._lock:
            if self._dead:
                self._drop_dead()
            # Another thread may have evicted the entry meanwhile: its value is
            # still this source's if the checks pass, and forgetting it twice is harmless.
            if not _unchanged(ref, key, source):
                self._forget(ref)  # freed, or alive with its storage swapped or rebound
                return None
            ref.used = True
            return ref.value

    def put(self, source, value) -> None:
        key = fingerprint(source)
        ref = _SourceRef(source, self._source_died)
        ref.key, ref.value, ref.source_id = key, value, id(source)
        ref.storage = pin_storage(source)
        ptr, shape, stride, dtype, _device, version, conj, neg = key
        ref.fast = (ptr, version, dtype, shape, stride, ref.storage.cdata, neg, conj if source.dtype.is_complex else None)
        ref.used = False
        with self._lock:
            if self._dead:
                self._drop_dead()
            old = self._entries.get(key)
            if old is not None:
                self._forget(old)
            self._entries[key] = ref
            self._recency[id(ref)] = ref
            self._by_id[ref.source_id] = ref
            self._evict_over_bound(newest=id(ref))

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

    def _evict_over_bound(self, newest: int) -> None:
        """Evict down to ``max_size`` (caller holds the lock), least recently used
        first, by second chance (CLOCK): the oldest entry goes unless it was hit
        since it last came round; then it is marked unused and queued again, just
        before the newest entry. Each hit buys one requeue, so this is O(1) amortised."""
        while len(self._recency) > self.max_size:
            oldest_id, oldest = next(iter(self._recency.items()))
            if oldest.used:
                oldest.used = False
                self._recency.move_to_end(oldest_id)
                self._recency.move_to_end(newest)
            else:
                self._forget(oldest)

    def _forget(self, ref: _SourceRef) -> None:
        """Remove one entry from every map (caller holds the lock). Each step is
        one atomic dict operation, so the lock-free fast path never sees a torn map."""
        if self._entries.get(ref.key) is ref:
            del self._entries[ref.key]
        self._recency.pop(id(ref), None)  # ref is alive here, so its id is its own
        # A dead source's id left the identity map when it died (source_died), and may
        # belong to a new object by now: look it up only while the source lives.
        if ref() is not None and self._by_id.get(ref.source_id) is ref:
            del self._by_id[ref.source_id]

    def _drop_dead(self) -> None:
        """Settle entries whose source object died (caller holds the lock): drop the
        entry if its storage died too, else keep it for later views of that storage
        (the object's id already left the identity map when it died). Each ref is
        settled once, when its object is gone, so this costs nothing per entry held."""
        while self._dead:
            ref = self._dead.pop()
            if ref.storage.expired():
                self._forget(ref)


def _last_holder(storage) -> bool:
    """Does one tensor alone hold this storage? ``_storage_Use_Count`` counts the
    reference it takes itself to count (a lone tensor's storage reads 2 in torch 2.13)."""
    return torch._C._storage_Use_Count(storage.cdata) <= 2


def _unchanged(ref: _SourceRef, key, source) -> bool:
    """Is the lookup tensor (whose fingerprint is ``key``) on the very storage the
    source had at insert time, and the source, if it still lives, unchanged: on
    that storage with the key's fingerprint? ``source`` may be the referent itself
    or another view of the same storage; an alias on another StorageImpl (DLPack,
    ``set_``) only costs a hit.

    With the referent gone, the storage alone decides: the pinned StorageImpl can
    belong to no other storage, and the lookup tensor holds it, so it is alive, at
    the key's address, layout and version (views share their base's version
    counter, so an in-place write through any of them shows)."""
    pinned = ref.storage.cdata
    referent = ref()
    if referent is not source:
        # The same address and layout, but another storage: the pinned one was
        # freed, or the lookup tensor is an alias on a StorageImpl of its own.
        if storage_id(source) != pinned:
            return False  # freed: its address may belong to someone else now
        if referent is None:
            return True  # a later view of the live storage the source was put with
        try:
            if fingerprint(referent) != key:
                return False  # alive, but moved, relaid or updated in place
        except TypeError:
            return False  # rebound to something that has no key at all
    return storage_id(referent) == pinned  # not rebound away and back


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
