"""Deliberately broken variants of the ``hardened`` (and ``request_scoped``) design.

Each mutant is the real source of ``cache_impl/hardened.py`` with one guard or
contract edited out, built into a module of its own. A harness that catches
bugs kills every one of them: the audit at the level the design claims must
fail. A survivor means a missing scenario (add it to the catalogue), never a
mutant to delete. An edit whose original text no longer exists is an error, so
a refactor cannot silently turn a mutant into the unmutated design.
"""

from __future__ import annotations

import itertools
import random
import types
from dataclasses import dataclass
from pathlib import Path

import torch

import cache_impl.keys as keys_module
import cache_impl.weakref_lru as weakref_module
import cache_impl.hardened as hardened_module
from harness.audit.dtypes import DTYPES, NEGATABLE, gradable

FAST_CHECK = '''            if (source.data_ptr() == ptr  # address-reuse: validated
                    and (version is None or source._version == version)
                    and source.dtype is dtype and source.shape == shape and source.stride() == stride
                    and storage_id(source) == storage and source.is_neg() is neg
                    and (conj is None or source.is_conj() is conj)):'''
SLOW_CHECK = "            if not _unchanged(ref, key, source):"
KEY = "return (ptr, shape, stride, dtype, t.device, version, dtype.is_complex and t.is_conj(), t.is_neg())"
TORCH = "__import__('torch')"  # the hardened module does not import torch itself
# The cache notes when it was made, on the clock it reads: mutants that trust it once it is old.
UP_SINCE = ("hardened", "        self._lock = threading.Lock()\n",
            "        self._lock = threading.Lock()\n        self._up_since = __import__('time').monotonic()\n")


@dataclass(frozen=True)
class Mutant:
    name: str
    breaks: str  # the guard or contract it drops
    edits: tuple  # (file, old, new): file is "hardened", "weakref_lru" or "keys" (the key function)
    cls: str = "HardenedCache"
    module: str = "hardened"  # the file the class is built from
    search_only: bool = False  # wrong only where the fixed catalogue never goes: the search must kill it


def _fast(old: str, new: str) -> tuple:
    return ("hardened", FAST_CHECK, FAST_CHECK.replace(old, new))


def _slow_trusts_when(condition: str) -> tuple:
    """The slow path trusts a hit without the liveness and referent checks when ``condition`` holds."""
    return ("hardened", SLOW_CHECK, f"            if not ({condition}) and not _unchanged(ref, key, source):")


def _key(old: str, new: str) -> tuple:
    return ("keys", KEY, KEY.replace(old, new))


def _search_only(name: str, breaks: str, *edits) -> "Mutant":
    return Mutant(name, breaks, edits, search_only=True)


MUTANTS = [
    Mutant("key_without_version", "the version field of the key",
           (("keys", "version = None if t.is_inference() else t._version", "version = None"),)),
    Mutant("key_without_ptr", "the address field of the key",
           (_key("(ptr, shape", "(0, shape"),)),
    Mutant("key_without_conj_neg_bits", "the conj and neg bits of the key",
           (_key(", dtype.is_complex and t.is_conj(), t.is_neg())", ", False, False)"),
            _fast(" and source.is_neg() is neg\n                    and (conj is None or source.is_conj() is conj))", ")"))),
    Mutant("fast_path_skips_version", "the version check on the identity fast path",
           (_fast("(version is None or source._version == version)", "True"),)),
    Mutant("fast_path_skips_address", "the address check on the identity fast path",
           (_fast("source.data_ptr() == ptr  # address-reuse: validated\n                    and ", ""),)),
    Mutant("fast_path_skips_shape", "the shape check on the identity fast path",
           (_fast(" and source.shape == shape", ""),)),
    Mutant("fast_path_skips_stride", "the stride check on the identity fast path",
           (_fast(" and source.stride() == stride", ""),)),
    Mutant("fast_path_skips_dtype", "the dtype check on the identity fast path",
           (_fast("and source.dtype is dtype ", ""),)),
    Mutant("key_on_storage_base", "the offset in the key: the storage's base address instead of data_ptr",
           (_key("(ptr, shape", "(t.untyped_storage().data_ptr(), shape"),)),
    Mutant("fast_path_skips_storage", "the storage identity check on the identity fast path",
           (_fast("\n                    and storage_id(source) == storage and", "\n                    and"),)),
    Mutant("fast_path_skips_conj", "the conj and neg checks on the identity fast path",
           (_fast(" and source.is_neg() is neg\n                    and (conj is None or source.is_conj() is conj))", ")"),)),
    Mutant("slow_path_skips_storage", "the storage identity check of the referent recheck",
           (("hardened", "    return storage_id(referent) == pinned", "    return True"),)),
    Mutant("no_liveness_check", "the liveness guard: dead sources' entries are kept and trusted",
           (("hardened", "ref = _SourceRef(source, self._source_died)", "ref = _SourceRef(source)"),
            ("hardened", "        return False  # freed: its address may belong to someone else now",
             "        return True"))),
    Mutant("no_referent_recheck", "the referent recheck: a live source with swapped storage is trusted",
           (("hardened", "            if fingerprint(referent) != key:", "            if False:"),
            ("hardened", "    return storage_id(referent) == pinned", "    return True"))),
    Mutant("no_lru_recency", "LRU recency: a hit does not mark its entry used",
           (("hardened", "                ref.used = True  #", "                pass  #"),
            ("hardened", "            ref.used = True\n            return", "            return"))),
    Mutant("no_bound", "the size bound", (("hardened", "while len(self._recency) > self.max_size:",
                                            "while False:"),)),
    Mutant("no_overwrite", "overwrite: a second put for the same source keeps the first value",
           (("hardened", "            if old is not None:\n                self._forget(old)\n",
             "            if old is not None:\n                return\n"),)),
    Mutant("clear_does_nothing", "clear()",
           (("hardened", "            self._entries.clear()\n            self._recency.clear()\n"
             "            self._by_id.clear()\n            self._dead.clear()\n", "            pass\n"),)),
    Mutant("no_proactive_eviction", "proactive eviction: dead entries are not dropped before the bound evicts",
           (("hardened", "ref = _SourceRef(source, self._source_died)", "ref = _SourceRef(source)"),)),
    Mutant("no_lazy_eviction", "lazy eviction: a lookup that meets a dead entry leaves it in place",
           (("hardened", "                self._forget(ref)  # freed, or alive with its storage swapped or rebound\n",
             "                pass\n"),
            ("hardened", "            if self._dead:\n                self._drop_dead()\n"
             "            # Another thread", "            # Another thread"),
            ("hardened", "            if self._dead:\n                self._drop_dead()\n"
             "            return len(self._recency)", "            return len(self._recency)"))),
    Mutant("keeps_source_alive", "never keeping a source alive: it pins every source it sees",
           (("hardened", "ref.key, ref.value, ref.source_id = key, value, id(source)",
             "ref.key, ref.value, ref.source_id = key, value, id(source)\n"
             "        self.__dict__.setdefault('_pins', []).append(source)"),)),
    Mutant("scoped_without_request_clear", "request scoping: begin_request() and end_request() keep entries",
           (("hardened", "    def begin_request(self) -> None:\n        self.clear()",
             "    def begin_request(self) -> None:\n        pass"),
            ("hardened", "    def end_request(self) -> None:\n        self.clear()",
             "    def end_request(self) -> None:\n        pass")), cls="RequestScopedCache"),
]


# Each of these is wrong only under a condition the fixed catalogue never produces
# (a size, a fill level, a hit count, a dtype, a layout, a grad mode): the
# audit's search must kill them, and a test checks that the catalogue alone does not.
MUTANTS += [
    # An in-place metadata change (unsqueeze_, t_, as_strided_) bumps the version of a tensor that has
    # one: only an inference tensor's shape and stride change with nothing else to tell.
    _search_only("fast_path_trusts_inference_layout",
                 "the shape and stride checks on the identity fast path, for an inference tensor (no version)",
                 _fast(" and source.shape == shape and source.stride() == stride",
                       " and (version is None or (source.shape == shape and source.stride() == stride))")),
    # The shape kept, the stride alone: what as_strided_ or a square transpose_ changes in place.
    _search_only("fast_path_trusts_inference_stride",
                 "the stride check on the identity fast path, for an inference tensor (no version)",
                 _fast(" and source.stride() == stride", " and (version is None or source.stride() == stride)")),
    _search_only("trusts_entry_after_many_hits", "every check, once an entry has served 16 hits",
                 ("hardened", "            if (source.data_ptr() == ptr  # address-reuse: validated",
                  "            served = self.__dict__.setdefault('_served', {})\n"
                  "            served[id(ref)] = served.get(id(ref), 0) + 1\n"
                  "            if served[id(ref)] > 16 or (source.data_ptr() == ptr  # address-reuse: validated")),
    _search_only("fast_path_trusts_version_after_1000_hits",
                 "the version check on the identity fast path, once an entry has served 1,000 lookups",
                 _fast("(version is None or source._version == version)",
                       "(version is None or served[id(ref)] > 1000 or source._version == version)"),
                 ("hardened", "            if (source.data_ptr() == ptr  # address-reuse: validated",
                  "            served = self.__dict__.setdefault('_served', {})\n"
                  "            served[id(ref)] = served.get(id(ref), 0) + 1\n"
                  "            if (source.data_ptr() == ptr  # address-reuse: validated")),
    # A write through the source, looked up through another tensor made on its storage before it (its
    # own version counter, the key the entry was put with): a tensor that is not a view of the source.
    _search_only("recheck_skipped_for_lookups_not_views",
                 "the referent's fingerprint recheck, when the lookup's tensor is not a view",
                 ("hardened", "            if fingerprint(referent) != key:",
                  "            if source._is_view() and fingerprint(referent) != key:")),
    # A source whose lazy bit is turned over in place (``t.data = t.conj()``) keeps its object,
    # address, layout and version: the identity fast path's bit checks alone see it.
    _search_only("fast_path_skips_conj_for_complex128_matrices",
                 "the conj check on the identity fast path, for complex128 sources of rank 2 with grad disabled",
                 _fast("(conj is None or source.is_conj() is conj)",
                       f"(conj is None or source.is_conj() is conj or (source.dtype is {TORCH}.complex128 "
                       f"and source.dim() == 2 and not {TORCH}.is_grad_enabled()))")),
    # A long-running server's entries are hours old when hit.
    _search_only("recency_ignores_old_entries",
                 "LRU recency: a hit on an entry put more than 5 minutes before, on the cache's clock",
                 ("hardened", '"fast", "used")', '"fast", "used", "born")'),
                 ("hardened", "        ref.used = False\n",
                  "        ref.used = False\n        ref.born = __import__('time').monotonic()\n"),
                 ("hardened", "                ref.used = True  #",
                  "                ref.used = ref.used or __import__('time').monotonic() - ref.born <= 300  #"),
                 ("hardened", "            ref.used = True\n            return",
                  "            ref.used = ref.used or __import__('time').monotonic() - ref.born <= 300\n"
                  "            return")),
    # Changes made in place on a live source, whose object, address and storage stay: an item read
    # as another dtype of its size, a flag turned over before a write, a hit through another object
    # before a write; and a hit count that buys an entry more than its recency.
    _search_only("fast_path_compares_item_size_for_shared_sources",
                 "the dtype on the identity fast path, for sources in shared memory: only its item size",
                 _fast("source.dtype is dtype", "(source.dtype is dtype or (source.is_shared() and "
                       "source.dtype.itemsize == dtype.itemsize))")),
    _search_only("fast_path_trusts_a_frozen_source",
                 "the version check on the identity fast path, for a source put requiring grad that no longer does",
                 ("hardened", '"fast", "used")', '"fast", "used", "grad")'),
                 ("hardened", "        ref.used = False\n", "        ref.used = False\n        ref.grad = source.requires_grad\n"),
                 _fast("(version is None or source._version == version)",
                       "(version is None or source._version == version or (ref.grad and not source.requires_grad))")),
    _search_only("slow_hit_drops_the_fast_version",
                 "the version check on the identity fast path, once the entry was hit through another object",
                 ("hardened", "            ref.used = True\n            return ref.value",
                  "            ref.used = True\n            ref.fast = (ref.fast[0], None, *ref.fast[2:])\n"
                  "            return ref.value")),
    _search_only("eviction_spares_entries_hit_ten_times",
                 "LRU order: an entry hit 10 times or more gets a second chance more than its recency gives",
                 ("hardened", '"fast", "used")', '"fast", "used", "count")'),
                 ("hardened", "        ref.used = False\n", "        ref.used = False\n        ref.count = 0\n"),
                 ("hardened", "                ref.used = True  #", "                ref.count += 1\n                ref.used = True  #"),
                 ("hardened", "            ref.used = True\n            return", "            ref.count += 1\n            ref.used = True\n            return"),
                 ("hardened", "            if oldest.used:\n", "            if oldest.used or oldest.count >= 10:\n"
                  "                oldest.count = 0 if not oldest.used else oldest.count\n")),
    _search_only("full_cache_skips_recheck", "the referent recheck once 32 or more entries are held",
                 _slow_trusts_when("len(self._recency) >= 32 and ref() is not None")),
    _search_only("large_cache_skips_liveness", "the liveness guard when max_size > 64",
                 ("hardened", "ref = _SourceRef(source, self._source_died)",
                  "ref = _SourceRef(source, self._source_died if self.max_size <= 64 else None)"),
                 _slow_trusts_when("self.max_size > 64")),
    _search_only("huge_cache_skips_liveness", "the liveness guard when max_size > 10,000 (a long-running server's)",
                 ("hardened", "ref = _SourceRef(source, self._source_died)",
                  "ref = _SourceRef(source, self._source_died if self.max_size <= 10_000 else None)"),
                 _slow_trusts_when("self.max_size > 10_000")),
    _search_only("size_one_skips_recheck", "the referent recheck when max_size is 1",
                 _slow_trusts_when("self.max_size == 1 and ref() is not None")),
    _search_only("half_types_share_key", "bfloat16 from float16 in the key",
                 _key("stride, dtype, t.device", "stride, (torch.float16 if dtype is torch.bfloat16 else dtype), t.device")),
    _search_only("key_dtype_by_size_and_kind", "the dtype in the key: only its size and whether it is floating",
                 _key("stride, dtype, t.device", "stride, (dtype.itemsize, dtype.is_floating_point), t.device")),
    # Keys written before torch had a dtype, which fold it into one they knew: the unsigned
    # types of 2 bytes and more (torch 2.3) into the signed ones, float8's fnuz formats (for AMD's
    # chips) into the others of their name. Only dtypes drawn from torch itself meet them.
    _search_only("wide_unsigned_keyed_as_signed", "uint16, uint32 and uint64 from int16, int32 and int64 in the key",
                 _key("stride, dtype, t.device", f"stride, (getattr({TORCH}, str(dtype)[6:].replace('uint', 'int')) "
                      "if dtype.itemsize > 1 else dtype), t.device")),
    _search_only("float8_fnuz_keyed_as_fn", "float8_e4m3fnuz and float8_e5m2fnuz from float8_e4m3fn and float8_e5m2 in "
                 "the key", _key("stride, dtype, t.device", f"stride, getattr({TORCH}, str(dtype)[6:].replace("
                                 "'e4m3fnuz', 'e4m3fn').replace('e5m2fnuz', 'e5m2')), t.device")),
    _search_only("old_entries_skip_version", "the version check on the fast path once more than 48 entries are held",
                 _fast("(version is None or source._version == version)",
                       "(version is None or len(self._recency) > 48 or source._version == version)")),
    _search_only("stride_as_contiguity_flag", "the stride in the key: only whether it is contiguous",
                 _key("shape, stride, dtype", "shape, t.is_contiguous(), dtype")),
    _search_only("expanded_keyed_as_contiguous", "the stride of expanded tensors (a 0 stride) in the key",
                 _key("shape, stride, dtype", "shape, (stride if 0 not in stride else "
                      "torch.empty(shape, device='meta').stride()), dtype")),
    _search_only("grad_on_skips_version", "the version check on the fast path with grad enabled",
                 _fast("(version is None or source._version == version)",
                       f"(version is None or {TORCH}.is_grad_enabled() or source._version == version)")),
    _search_only("large_sources_skip_liveness", "the liveness guard for sources of more than 4,096 elements",
                 ("hardened", "ref = _SourceRef(source, self._source_died)",
                  "ref = _SourceRef(source, self._source_died if source.numel() <= 4096 else None)"),
                 _slow_trusts_when("source.numel() > 4096")),
    _search_only("float64_skips_liveness", "the liveness guard for float64 sources",
                 ("hardened", "ref = _SourceRef(source, self._source_died)",
                  f"ref = _SourceRef(source, self._source_died if source.dtype != {TORCH}.float64 else None)"),
                 _slow_trusts_when(f"source.dtype == {TORCH}.float64")),
    _search_only("many_dims_skip_recheck", "the referent recheck for sources of more than 3 dimensions",
                 _slow_trusts_when("source.dim() > 3 and ref() is not None")),
    _search_only("grad_sources_skip_liveness", "the liveness guard for grad-requiring sources used with grad on",
                 ("hardened", "ref = _SourceRef(source, self._source_died)",
                  f"ref = _SourceRef(source, None if source.requires_grad and {TORCH}.is_grad_enabled() "
                  "else self._source_died)"),
                 _slow_trusts_when(f"source.requires_grad and {TORCH}.is_grad_enabled()")),
    # A version counter kept in fewer bits than torch's: a source written 2**16 (or 2**8) times
    # between its put and its lookup meets its old entry again.
    _search_only("key_version_16_bits", "the version in the key, kept to its low 16 bits",
                 ("keys", "version = None if t.is_inference() else t._version",
                  "version = None if t.is_inference() else t._version & 0xFFFF")),
    _search_only("key_version_8_bits", "the version in the key, kept to its low 8 bits",
                 ("keys", "version = None if t.is_inference() else t._version",
                  "version = None if t.is_inference() else t._version & 0xFF")),
    # A long-running server's shortcut: after an hour up, trust a hit whose entry is alive. The
    # catalogue and the search run for seconds, so only the probes' clock (elapsed) sees it.
    _search_only("trusts_after_an_hour", "the referent recheck, once the cache has been up an hour",
                 UP_SINCE, _slow_trusts_when("__import__('time').monotonic() - self._up_since > 3600")),
    # Not search-only: the catalogue's module_dtype_round_trip serves its weight under no_grad.
    Mutant("no_grad_skips_liveness", "the liveness guard for entries made and looked up under no_grad",
           (("hardened", "ref = _SourceRef(source, self._source_died)",
             f"ref = _SourceRef(source, self._source_died if {TORCH}.is_grad_enabled() "
             f"or {TORCH}.is_inference_mode_enabled() else None)"),
            _slow_trusts_when(f"not {TORCH}.is_grad_enabled() and not {TORCH}.is_inference_mode_enabled()"))),
]


# Not a catalogue mutant: no single-threaded scenario can see a missing lock. The
# concurrency stress must catch it (tests/test_selfvalidation.py).
WEAKREF_WITHOUT_LOCK = Mutant("weakref_without_lock", "the lock around each call",
                              (("weakref_lru", "with self._lock:", "if True:"),),
                              cls="SourceTensorLRUCache", module="weakref_lru")


def _edit(text: str, old: str, new: str, mutant: str) -> str:
    if old not in text:
        raise RuntimeError(f"mutant {mutant}: the text to edit is gone: {old!r}")
    return text.replace(old, new)


def build(mutant: Mutant):
    """The mutant's cache class, built from edited copies of the real sources."""
    sources = {name: Path(module.__file__).read_text() for name, module in
               (("hardened", hardened_module), ("keys", keys_module), ("weakref_lru", weakref_module))}
    for file, old, new in mutant.edits:
        sources[file] = _edit(sources[file], old, new, mutant.name)
    fp = types.ModuleType(f"mutant_{mutant.name}_keys")
    exec(compile(sources["keys"], f"<mutant {mutant.name}: keys.py>", "exec"), fp.__dict__)
    mod = types.ModuleType(f"mutant_{mutant.name}")
    exec(compile(sources[mutant.module], f"<mutant {mutant.name}: {mutant.module}.py>", "exec"), mod.__dict__)
    mod.fingerprint = fp.fingerprint  # the mutant's key function, if it edited one
    return getattr(mod, mutant.cls)


# --- generated mutants: one guard of the reference design, skipped only when a random predicate holds ---

# Properties a generated guard may depend on (not "empty": an empty tensor's value is
# every other's of its dtype and shape, so no guard is observable there), in groups (a predicate takes at most one
# atom of a group). ``{t}`` is the tensor in hand, ``{c}`` the cache: atoms with
# ``{c}`` are about the cache's history and fit only guards whose code has the cache.
ATOMS = {
    "shape": {"rank 0": "{t}.dim() == 0", "rank >= 3": "{t}.dim() >= 3", "rank >= 5": "{t}.dim() >= 5",
              "rank 1": "{t}.dim() == 1", "odd size": "{t}.numel() % 2 == 1",
              "more than 4096 elements": "{t}.numel() > 4096", "a dimension of size 1": "1 in {t}.shape"},
    "dtype": {**{f"dtype {name}": f"{{t}}.dtype == torch.{name}" for name in DTYPES},
              "1-byte items": "{t}.element_size() == 1", "8-byte items": "{t}.element_size() == 8",
              "complex": "{t}.is_complex()", "not floating": "not {t}.is_floating_point()"},
    "layout": {"not contiguous": "not {t}.is_contiguous()", "a zero stride": "0 in {t}.stride()",
               "offset into its storage": "{t}.storage_offset() > 0",
               "channels_last": "{t}.dim() == 4 and not {t}.is_contiguous() and "
                                "{t}.is_contiguous(memory_format=torch.channels_last)",
               "shared memory": "{t}.is_shared()", "conj bit": "{t}.is_conj()", "neg bit": "{t}.is_neg()"},
    "object": {"requires grad": "{t}.requires_grad", "a Parameter": "isinstance({t}, torch.nn.Parameter)",
               "a subclass": "type({t}) is not torch.Tensor", "an inference tensor": "{t}.is_inference()"},
    # a buffer a long-running server has written all along (torch's counter is 32 bits wide); a long
    # prompt's embedding or a video latent (tens of millions of elements); a view deep into a large buffer
    "scale": {"version past 2**16": "not {t}.is_inference() and {t}._version >= 2**16",
              "version past 2**31": "not {t}.is_inference() and {t}._version >= 2**31",
              "more than 2**24 elements": "{t}.numel() > 2**24",
              "an offset past 2**24": "{t}.storage_offset() > 2**24",
              "a storage past 2**25 bytes": "{t}.untyped_storage().nbytes() > 2**25"},
    "mode": {"grad enabled": "torch.is_grad_enabled()", "inference mode": "torch.is_inference_mode_enabled()",
             "another thread": "threading.current_thread() is not threading.main_thread()"},
    # a long-running server: the cache's age on the clock it reads (the probes' elapsed moves it)
    "time": {"up an hour": "__import__('time').monotonic() - {c}._up_since > 3600",
             "up a day": "__import__('time').monotonic() - {c}._up_since > 86400"},
    "history": {"max_size 1": "{c}.max_size == 1", "max_size > 100": "{c}.max_size > 100",
                "max_size >= 1000": "{c}.max_size >= 1000", "max_size > 10000": "{c}.max_size > 10000",
                "odd max_size": "{c}.max_size % 2 == 1",
                "32 or more held": "len({c}._recency) >= 32", "full": "len({c}._recency) >= {c}.max_size",
                "more than 100 calls": "getattr({c}, '_calls', 0) > 100",
                "more than 2**16 calls": "getattr({c}, '_calls', 0) > 2**16",
                "every 7th call": "getattr({c}, '_calls', 0) % 7 == 0"},
}
# Atom pairs no tensor has at once: a predicate never holding would be no mutant at all.
_NOT_RANK_0 = ("not contiguous", "a zero stride", "channels_last", "a dimension of size 1", "more than 4096 elements",
               "more than 2**24 elements")
EXCLUDED = {frozenset(pair) for pair in [("requires grad", "not floating"), ("requires grad", "1-byte items"),
                                          ("an inference tensor", "requires grad"), ("rank 1", "channels_last"),
                                          ("rank >= 5", "channels_last"),
                                          ("an inference tensor", "version past 2**16"),
                                          ("an inference tensor", "version past 2**31")]} | {
    frozenset(("rank 0", name)) for name in _NOT_RANK_0} | {
    frozenset(("requires grad", f"dtype {name}")) for name in DTYPES if not gradable(getattr(torch, name))} | {
    # only a complex tensor has a conj bit
    frozenset(("conj bit", name)) for name in ATOMS["dtype"] if (name.startswith("dtype ") and "complex" not in name)
    or name == "1-byte items"} | {
    # torch cannot read bool, float8 or uint16-64 negated: no such tensor has a neg bit
    frozenset(("neg bit", f"dtype {name}")) for name in DTYPES if name not in NEGATABLE}

# A guard skipped only where it compares nothing, for the reference: the predicate fixes
# the very field the guard compares, or the obligation the guard serves cannot arise where it
# holds. Such a "mutant" behaves as the reference on every tensor, so none is made:
# {guard: {(atom, negated): why}}.
_ONE_DTYPE = {(name, False): "one dtype alone: the key still tells it from every other"
              for name in ATOMS["dtype"] if name.startswith("dtype ")}
_REAL = {(name, False): "no complex tensor has it, and a real tensor's conj field is always False"
         for name in ATOMS["dtype"] if name.startswith("dtype ") and "complex" not in name} | {
    ("1-byte items", False): "no complex tensor has it, and a real tensor's conj field is always False",
    ("not floating", True): "a floating-point dtype is real: its conj field is always False"}
_NO_NEG = {(f"dtype {name}", False): f"torch cannot read a negated {name} tensor, so none reaches a cache"
           for name in DTYPES if name not in NEGATABLE}
UNOBSERVABLE = {
    "key: shape": {("rank 0", False): "every rank-0 tensor has shape ()"},
    "key: stride": {("rank 0", False): "every rank-0 tensor has stride ()",
                    ("channels_last", False): "two channels_last tensors of one shape have one stride, but for "
                    "dimensions of size 1, whose stride changes no value",
                    ("not contiguous", True): "two contiguous tensors of one shape have one stride, but for "
                    "dimensions of size 1, whose stride changes no value"},
    "key: dtype": _ONE_DTYPE,
    "key: version": {("an inference tensor", False): "an inference tensor's version field is None already"},
    "key: conj bit": {("conj bit", True): "where the bit is not set, the field is False already", **_REAL},
    "key: neg bit": {("neg bit", True): "where the bit is not set, the field is False already", **_NO_NEG},
    "key: address": {("offset into its storage", True): "two tensors at offset 0 of one storage share their "
                     "address, and on two storages the storage identity check tells them apart"},
    "recency": {("max_size 1", False): "a cache of one entry evicts it at the next insert, hit or not"},
}

SLOW_GET = "        return None  # a plain miss needs no lock\n        with self._lock:\n"
COUNT_CALLS = ("hardened", "    def get(self, source):\n",
               "    def get(self, source):\n        self._calls = getattr(self, '_calls', 0) + 1\n")
IMPORT_TORCH = ("hardened", "import threading\n", "import threading\n\nimport torch\n")
IMPORT_THREADING = ("keys", "import torch\n", "import threading\n\nimport torch\n")


def _key_field(position: int, constant: str):
    """The key function replaces one field of the fingerprint with a constant when P holds."""
    fields = ["ptr", "shape", "stride", "dtype", "t.device", "version", "dtype.is_complex and t.is_conj()",
              "t.is_neg()"]

    def edits(p):
        changed = list(fields)
        changed[position] = f"({constant} if ({p}) else {fields[position]})"
        return [IMPORT_THREADING, ("keys", KEY, f"return ({', '.join(changed)})")]
    return edits


# Each guard: (what it protects, the atoms its code can evaluate, edits given the predicate's text P).
# "tensor": the key function sees only the tensor; "any": get/put see the cache too;
# "history": clear() sees only the cache.
GUARDS = {
    "liveness": ("the liveness guard: a dead source's entry is kept and trusted", "any", lambda p: [
        ("hardened", "ref = _SourceRef(source, self._source_died)",
         f"ref = _SourceRef(source, None if ({p}) else self._source_died)"),
        _slow_trusts_when(f"({p}) and ref() is None")]),
    "recheck": ("the referent recheck: a live referent is trusted", "any", lambda p: [
        _slow_trusts_when(f"({p}) and ref() is not None")]),
    "storage identity": ("the storage identity checks", "any", lambda p: [
        _fast("\n                    and storage_id(source) == storage and",
              f"\n                    and (({p}) or storage_id(source) == storage) and"),
        ("hardened", "def _unchanged(ref: _SourceRef, key, source) -> bool:",
         "def _unchanged(ref: _SourceRef, key, source, skip_storage=False) -> bool:"),
        ("hardened", "        if storage_id(source) != pinned:",
         "        if not skip_storage and storage_id(source) != pinned:"),
        ("hardened", "    return storage_id(referent) == pinned",
         "    return skip_storage or storage_id(referent) == pinned"),
        ("hardened", SLOW_CHECK, f"            if not _unchanged(ref, key, source, {p}):")]),
    "key: address": ("the address in the key", "tensor", _key_field(0, "0")),
    "key: shape": ("the shape in the key", "tensor", _key_field(1, "()")),
    "key: stride": ("the stride in the key", "tensor", _key_field(2, "()")),
    "key: dtype": ("the dtype in the key", "tensor", _key_field(3, "None")),
    "key: version": ("the version in the key", "tensor", _key_field(5, "None")),
    "key: conj bit": ("the conj bit in the key", "tensor", _key_field(6, "False")),
    "key: neg bit": ("the neg bit in the key", "tensor", _key_field(7, "False")),
    "recency": ("LRU recency: a hit does not mark its entry used", "any", lambda p: [
        ("hardened", "                ref.used = True  #", f"                ref.used = ref.used or not ({p})  #"),
        ("hardened", "            ref.used = True\n            return",
         f"            ref.used = ref.used or not ({p})\n            return")]),
    "bound": ("the size bound: no eviction on this insert", "any", lambda p: [
        ("hardened", "            self._evict_over_bound(newest=id(ref))",
         f"            if not ({p}):\n                self._evict_over_bound(newest=id(ref))")]),
    "clear": ("clear(): it keeps every entry", "history", lambda p: [
        ("hardened", "    def clear(self) -> None:\n",
         f"    def clear(self) -> None:\n        if {p}:\n            return\n")]),
}


@dataclass(frozen=True)
class Generated:
    name: str
    guard: str
    predicate: str  # in words
    mutant: Mutant
    atoms: tuple = ()  # the predicate's atoms, by name

    @property
    def families(self) -> tuple:
        """The groups of ``ATOMS`` its predicate draws on, and "3-way" for a conjunction of three."""
        groups = tuple(next(g for g, atoms in ATOMS.items() if a in atoms) for a in self.atoms)
        return groups + (("3-way",) if len(self.atoms) == 3 else ())


def generate(count: int = 200, seed: int = 0) -> list[Generated]:
    """``count`` mutants of ``hardened``, drawn with ``random.Random(seed)``: a guard,
    and a predicate of one, two or three atoms of other groups (of several, each maybe
    negated) under which that guard is skipped; a predicate that no tensor meets (a pair in
    ``EXCLUDED``) or under which the guard compares nothing (``UNOBSERVABLE``) is drawn again."""
    rng = random.Random(seed)
    made = []
    while len(made) < count:
        guard = rng.choice(list(GUARDS))
        breaks, sees, edits = GUARDS[guard]
        groups = ["history"] if sees == "history" else [g for g in ATOMS
                                                        if sees == "any" or g not in ("history", "time")]
        chosen = rng.sample(groups, k=min(len(groups), rng.choice((1, 2, 3))))
        atoms = [rng.choice(list(ATOMS[g])) for g in chosen]
        negated = [len(atoms) > 1 and rng.random() < 0.2 for _ in atoms]
        held = [a for a, neg in zip(atoms, negated) if not neg]
        if any(frozenset(pair) in EXCLUDED for pair in itertools.combinations(held, 2)):
            continue
        if any((a, neg) in UNOBSERVABLE.get(guard, {}) for a, neg in zip(atoms, negated)):
            continue
        words = " and ".join(("not " if neg else "") + a for a, neg in zip(atoms, negated))
        t, c = ("t", None) if guard.startswith("key") else ("source", "self")
        text = " and ".join(("not " if neg else "") + "(" + _atom(a).format(t=t, c=c) + ")"
                            for a, neg in zip(atoms, negated))
        name = f"g{len(made):03d}"
        extra = [COUNT_CALLS] if any("_calls" in _atom(a) for a in atoms) else []
        extra += [UP_SINCE] if any("_up_since" in _atom(a) for a in atoms) else []
        mutant = Mutant(name, f"{breaks}, when {words}", tuple([IMPORT_TORCH, *extra, *edits(text)]))
        made.append(Generated(name, guard, words, mutant, tuple(atoms)))
    return made


def _atom(name: str) -> str:
    return next(group[name] for group in ATOMS.values() if name in group)
