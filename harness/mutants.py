"""Deliberately broken variants of the ``hardened`` (and ``request_scoped``) design.

Each mutant is the real source of ``cache_impl/hardened.py`` with one guard or
contract edited out, built into a module of its own. A harness that catches
bugs kills every one of them: the audit at the level the design claims must
fail. A survivor means a missing scenario (add it to the catalogue), never a
mutant to delete. An edit whose original text no longer exists is an error, so
a refactor cannot silently turn a mutant into the unmutated design.
"""

from __future__ import annotations

import types
from dataclasses import dataclass
from pathlib import Path

import cache_impl.keys as keys_module
import cache_impl.weakref_lru as weakref_module
import cache_impl.hardened as hardened_module

FAST_CHECK = '''            if (source.data_ptr() == ptr and (version is None or source._version == version)
                    and source.dtype is dtype and source.shape == shape and source.stride() == stride):'''


@dataclass(frozen=True)
class Mutant:
    name: str
    breaks: str  # the guard or contract it drops
    edits: tuple  # (file, old, new): file is "hardened", "weakref_lru" or "keys" (the key function)
    cls: str = "HardenedCache"
    module: str = "hardened"  # the file the class is built from


def _fast(old: str, new: str) -> tuple:
    return ("hardened", FAST_CHECK, FAST_CHECK.replace(old, new))


MUTANTS = [
    Mutant("key_without_version", "the version field of the key",
           (("keys", "version = None if t.is_inference() else t._version", "version = None"),)),
    Mutant("key_without_ptr", "the address field of the key",
           (("keys", "return (t.data_ptr(), tuple(t.shape)", "return (0, tuple(t.shape)"),)),
    Mutant("fast_path_skips_version", "the version check on the identity fast path",
           (_fast("(version is None or source._version == version)", "True"),)),
    Mutant("fast_path_skips_address", "the address check on the identity fast path",
           (_fast("source.data_ptr() == ptr and ", ""),)),
    Mutant("fast_path_skips_shape", "the shape check on the identity fast path",
           (_fast(" and source.shape == shape", ""),)),
    Mutant("fast_path_skips_stride", "the stride check on the identity fast path",
           (_fast(" and source.stride() == stride", ""),)),
    Mutant("fast_path_skips_dtype", "the dtype check on the identity fast path",
           (_fast("and source.dtype is dtype ", ""),)),
    Mutant("fast_path_trusts_id", "the identity proof: trusts id(), which is reused too",
           (("hardened", "if ref is not None and ref() is source:", "if ref is not None:"),)),
    Mutant("no_liveness_check", "the liveness guard: dead sources' entries are kept and trusted",
           (("hardened", "ref = _SourceRef(source, self._source_died)", "ref = _SourceRef(source)"),
            ("hardened", "if referent is None or (referent is not source",
             "if referent is not None and (referent is not source"),
            ("hardened", "return ref.value\n\n    def put", "return ref.value if referent is not None else "
             "next((r.value for r in self._entries.values() if r.key == key), None)\n\n    def put"))),
    Mutant("no_referent_recheck", "the referent recheck: a live source with swapped storage is trusted",
           (("hardened", "(referent is not source and fingerprint(referent) != key)", "False"),)),
    Mutant("no_lru_recency", "LRU recency: a hit does not refresh its entry",
           (("hardened", "                self._recency.move_to_end(id(ref))\n", "                pass\n"),
            ("hardened", "            self._recency.move_to_end(id(ref))\n            return", "            return"))),
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
           (("hardened", "                self._forget(ref)  # freed, or alive with its storage swapped\n",
             "                pass\n"),
            ("hardened", "            if self._dead:\n                self._drop_dead()\n"
             "                ref = self._entries.get(key)\n                if ref is None:\n"
             "                    return None\n", ""),
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
