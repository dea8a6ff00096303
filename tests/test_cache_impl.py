"""The cache designs' own API: the seed's drop-in contract, resolve(), fingerprint()."""

from __future__ import annotations

import weakref

import pytest
import torch
from torch.multiprocessing.reductions import StorageWeakRef

from cache_impl import (DESIGNS, CacheSpecError, HardenedCache, RequestScopedCache,
                        SourceTensorLRUCache, fingerprint, resolve)
from repro.allocator import AddressArena

pytestmark = [pytest.mark.core_model, pytest.mark.cpu]


def test_seed_drop_in_api():
    cache = SourceTensorLRUCache(max_size=2)
    src, value = torch.randn(2, 4), torch.randn(2, 4)
    assert cache.get(src) is None
    cache.put(src, value)
    assert cache.get(src) is value
    assert len(cache) == 1
    cache.clear()
    assert len(cache) == 0 and cache.get(src) is None


def test_fingerprint_fields_and_inference_tensors():
    t = torch.zeros(3, 4)
    assert fingerprint(t) == (t.data_ptr(), (3, 4), (4, 1), torch.float32, t.device, 0, False, False)
    t.add_(1)
    assert fingerprint(t)[5] == 1
    with torch.inference_mode():
        inf = torch.zeros(3, 4)
    assert fingerprint(inf)[5] is None  # inference tensors have no version counter


def test_fingerprint_sees_conj_and_neg_bits():
    a = torch.randn(4, dtype=torch.complex64)
    assert fingerprint(a)[:6] == fingerprint(a.conj())[:6]  # everything else is shared
    assert fingerprint(a) != fingerprint(a.conj())
    assert fingerprint(a.imag) != fingerprint(a.conj().imag)


def _unkeyable():
    from torch.testing._internal.two_tensor import TwoTensor
    rows = [torch.randn(2, 3), torch.randn(4, 3)]
    return {
        "nested tensor": lambda: torch.nested.nested_tensor(rows, layout=torch.jagged),
        "nested tensor ": lambda: torch.nested.nested_tensor(rows),  # strided layout
        "TwoTensor": lambda: TwoTensor(torch.randn(3), torch.randn(3)),
        "meta tensor": lambda: torch.empty(3, device="meta"),
        "sparse_coo": lambda: torch.randn(3, 3).to_sparse(),
        "sparse_csr": lambda: torch.randn(3, 3).to_sparse_csr(),
        "quantized": lambda: torch.quantize_per_tensor(torch.randn(4), 0.1, 0, torch.qint8),
    }


@pytest.mark.parametrize("kind", list(_unkeyable()))
@pytest.mark.parametrize("name", list(DESIGNS))
def test_tensors_without_one_data_address_are_refused_in_one_line(name, kind):
    """Never a silent shared key, never an error from deep inside: a TypeError naming the kind."""
    source = _unkeyable()[kind]()
    cache = DESIGNS[name](max_size=2)
    for call in (lambda: cache.get(source), lambda: cache.put(source, torch.ones(1))):
        with pytest.raises(TypeError, match=kind.strip()) as refused:
            call()
        assert "\n" not in str(refused.value)
    assert len(cache) == 0


def test_parameters_and_empty_tensors_are_keyed():
    assert fingerprint(torch.nn.Parameter(torch.randn(3)))[1] == (3,)
    assert fingerprint(torch.empty(0))[1] == (0,)


@pytest.mark.parametrize("name", list(DESIGNS))
def test_non_tensor_source_is_a_clear_type_error(name):
    cache = DESIGNS[name](max_size=2)
    with pytest.raises(TypeError, match="torch.Tensor"):
        cache.put("not a tensor", 1)
    with pytest.raises(TypeError, match="torch.Tensor"):
        cache.get([1, 2])


@pytest.mark.parametrize("bad", [0, -1, 1.5, "2", True, None])
def test_bad_max_size_rejected(bad):
    for factory in DESIGNS.values():
        with pytest.raises(ValueError, match="max_size"):
            factory(max_size=bad)


def test_resolve_names_and_paths():
    assert resolve("weakref") is SourceTensorLRUCache
    assert resolve("cache_impl.hardened:HardenedCache") is HardenedCache
    assert resolve("cache_impl:RequestScopedCache") is RequestScopedCache


@pytest.mark.parametrize("spec, message", [
    ("", "empty"),
    ("nope", "unknown cache"),
    ("a:b:c", "malformed"),
    (":Attr", "malformed"),
    ("no_such_module_xyz:Cache", "cannot import"),
    ("cache_impl:NoSuchCache", "no attribute"),
    ("cache_impl.levels:LEVELS", "not callable"),
    ("collections:OrderedDict", "missing put"),
    ("builtins:len", "failed"),
])
def test_resolve_rejects_with_one_line(spec, message):
    with pytest.raises(CacheSpecError, match=message) as info:
        resolve(spec)
    assert "\n" not in str(info.value)


def test_hardened_fast_path_does_not_trust_ids():
    """An id() can be reused as well; the identity fast path must check the referent."""
    cache = HardenedCache(max_size=4)
    src = torch.randn(2, 3)
    cache.put(src, "value")
    stale_id = id(src)
    del src
    fresh = torch.randn(2, 3)
    assert cache.get(fresh) is None or id(fresh) != stale_id
    assert len(cache) <= 1


def test_hardened_put_drops_dead_entries_without_scanning():
    cache = HardenedCache(max_size=8)
    sources = [torch.randn(4) for _ in range(8)]
    for s in sources:
        cache.put(s, s * 2)
    del sources, s
    assert len(cache) == 0  # weakref callbacks queued the removals; len() applies them


def test_caches_hold_no_reference_to_sources():
    for factory in DESIGNS.values():
        cache = factory(max_size=2)
        src = torch.randn(3)
        cache.put(src, torch.zeros(3))
        ref = weakref.ref(src)
        del src
        assert ref() is None, factory.__name__


def test_hardened_entry_follows_the_storage_not_the_view_object():
    """A new view each step hits while the storage lives; the entry pins no memory,
    and once the storage dies the entry goes and a tensor at its address misses."""
    cache = HardenedCache(max_size=2)
    arena = AddressArena((8, 8))
    base = arena.fresh(torch.randn(8, 8))
    cache.put(base.view(64), "value")  # that view is gone after this line
    assert cache.get(base.view(64)) == "value" and cache.get(base[:].view(64)) == "value"
    assert cache.get(base.view(8, 8)) is None  # another layout is another key
    storage = StorageWeakRef(base.untyped_storage())
    del base
    assert storage.expired()  # no strong reference to the storage anywhere: its data goes with it
    assert len(cache) == 1  # an entry whose view died first waits to be met or evicted
    fresh = arena.fresh(torch.randn(8, 8))
    assert fresh.data_ptr() == arena.address  # forced reuse, so the miss below means something
    assert cache.get(fresh.view(64)) is None and len(cache) == 0
