"""The audit's systematic phase: rows that meet every pair of property values, every
obligation in each, no failure on a sound design, a runnable snippet on a broken one."""

from __future__ import annotations

import itertools
import math
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from cache_impl import DESIGNS, Level
from harness.audit.mutants import (ATOMS, COUNT_CALLS, GUARDS, IMPORT_TORCH, MUTANTS, UP_SINCE, Mutant, _atom, build,
                                   generate)
from harness.audit.probes import (FILLED_LARGE_SIZE, FILLED_ON, LAYOUTS, LIVED_ON, LONGEST, OFFSETS, ONE_RANK_LAYOUTS,
                                  PERIOD, PROPERTIES, RANK_GROUPS, SHAPES, SIZES, SMALL_NEW, _end, _possible, coverage_markdown,
                                  describe, drawn_rows, formats, key_variants, probe, rank_of, row_steps, situations, source_of,
                                  triples)

pytestmark = [pytest.mark.cpu]


@pytest.mark.core_model
def test_every_pair_of_property_values_meets_in_some_row():
    rows = situations()
    met = {(a, row[a], b, row[b]) for row in rows for a, b in itertools.combinations(PROPERTIES, 2)}
    for a, b in itertools.combinations(PROPERTIES, 2):
        for va, vb in itertools.product(PROPERTIES[a], PROPERTIES[b]):
            if _possible({a: va, b: vb}):
                assert (a, va, b, vb) in met, f"no row has {a} {va} with {b} {vb}"
    assert all(_possible(row) for row in rows)
    # the pairwise array near its floor (each pair of the two largest properties needs a row of
    # its own), not the product of every value (millions of rows); the triples come on top
    floor = max(sum(_possible({a: va, b: vb}) for va in PROPERTIES[a] for vb in PROPERTIES[b])
                for a, b in itertools.combinations(PROPERTIES, 2))
    assert len(rows) - len(triples()) - len(formats()) <= 1.25 * floor, (len(rows), floor)


@pytest.mark.core_model
def test_each_row_runs_every_obligation_of_the_level():
    row = next(row for row in situations() if row["kind"] == "tensor" and int(row["max_size"]) > 1)
    text = "\n".join(code for _, code in row_steps(row, "Cache", Level.L3, "lru"))
    for obligation in ("in place", "reshaped in place", "restrided in place", "key: address", "key: shape",
                       "key: stride", "key: dtype", "key: conj bit", "key: neg bit", "freed", "storage swapped",
                       "rebound away and back", "rewritten with no version bump", "clear()", "recency",
                       "written, seen through an older object"):
        assert obligation in text, obligation
    low = "\n".join(code for _, code in row_steps(row, "Cache", Level.L0, "none"))
    assert "freed" not in low and "recency" not in low and "cache.clear()" not in low
    assert "older object" not in low  # a key alone cannot see it: an obligation of L2
    # a lazy bit turned over in place: conj where the dtype has it, else neg where torch reads it
    for dtype, bit in (("complex64", "conj"), ("float32", "neg"), ("bool", None)):
        row = next(row for row in situations() if row["dtype"] == dtype)
        low = "\n".join(code for _, code in row_steps(row, "Cache", Level.L0, "none"))
        assert (f"{bit} bit turned over" in low) if bit else ("bit turned over" not in low), (dtype, bit)
    view = next(row for row in situations() if row["kind"] == "view")
    text = "\n".join(code for _, code in row_steps(view, "Cache", Level.L3, "lru"))
    assert ", 23, T)" in text and "T = dict(S, kind='tensor')" in text  # its base holds the storage: a tensor stands in


def test_an_entry_that_expires_with_age_is_no_recency_failure():
    """Recency is judged on a hit after the row's elapsed time (an old entry's hit refreshes it too),
    but an entry that old may have expired: an LRU cache with a time to live passes those rows."""
    class Expiring(DESIGNS["hardened"]):
        def put(self, source, value):
            super().put(source, (value, time.monotonic()))

        def get(self, source):
            entry = super().get(source)
            return None if entry is None or time.monotonic() - entry[1] > 3600 else entry[0]

    aged = lambda row: row["elapsed"] != "0" and _small_caches(row)  # noqa: E731
    report = probe("expiring", Expiring, Level.L2, contract="lru", only=aged)
    assert report.failure is None, f"{report.failure.message}\n{report.failure.snippet[-3000:]}"
    assert report.rows == report.total > 50


def _small_caches(row) -> bool:
    """Caches up to 64 entries: most of a row's time is the history of a larger cache, and
    64 still holds the "60 held" history."""
    return int(row["max_size"]) <= 64


@pytest.mark.parametrize("name", list(DESIGNS))
def test_a_sound_design_passes_every_row_at_its_level(name):
    """Every row for the reference the mutants are made from; for the others, the rows of
    caches up to 64 entries (most of a larger cache's row is its history: a short suite)."""
    factory = DESIGNS[name]
    report = probe(name, factory, Level.parse(factory.level), contract="lru",
                   only=None if name == "hardened" else _small_caches)
    assert report.failure is None, f"{report.failure.message}\n{report.failure.snippet[-3000:]}"
    assert report.rows == report.total > 100


SEARCH_MUTANTS = [m for m in MUTANTS if m.search_only]


@pytest.mark.parametrize("mutant", SEARCH_MUTANTS, ids=[m.name for m in SEARCH_MUTANTS])
def test_the_probes_kill_what_the_catalogue_misses(mutant):
    """Each hand-written mutant that the catalogue passes is wrong only under a
    condition: the probes meet it without being told which."""
    cls = build(mutant)
    report = probe(mutant.name, cls, Level.parse(cls.level), contract="lru")
    assert report.failure is not None, f"{mutant.name} survived the probes: they miss '{mutant.breaks}'"
    assert report.failure.level <= cls.level


def test_each_row_starts_its_cache_on_the_real_clock():
    """A guard skipped for expanded sources while the cache is young: the rows of elapsed 0 must see a
    young cache, though earlier rows moved the clock on by hours (they once carried the advance over)."""
    young = "not (__import__('time').monotonic() - self._up_since > 3600) and (0 in source.stride())"
    edits = (IMPORT_TORCH, UP_SINCE, *GUARDS["liveness"][2](young))
    cls = build(Mutant("liveness_skipped_while_young", "the liveness guard, for expanded sources in the first hour",
                       edits))
    report = probe("liveness_skipped_while_young", cls, Level.parse(cls.level), contract="lru")
    assert report.failure is not None and report.failure.level == Level.L1, report.failure


@pytest.mark.core_model
def test_sources_at_scale_cost_what_they_span():
    """Rows "past 2**24" make sources of more than 2**24 elements, and rows at the deepest offset
    sources on storages past 2**25 bytes; each source writes, of its storage, less than a million
    items. Ranks 0 and 1 stay as shaped (a vector is itself broadcast), and an odd element count odd."""
    rows = situations()
    for row in rows:
        s = source_of(row)
        assert (math.prod(s["shape"]) > 2**24) == (row["size"] != SIZES[0]), row
        assert len(s["shape"]) == len(SHAPES[row["shape"]]) + (row["size"] != SIZES[0] and row["shape"] != "vector")
        assert math.prod(s["shape"]) % 2 == math.prod(SHAPES[row["shape"]]) % 2, row
        written = s["own"] if row["storage"] == "its own" else s["fill"]
        assert written - (s["offset"] - s["offset"] % PERIOD) < 2**20, row
        if row["offset"] == OFFSETS[-1]:
            assert s["own"] * s["dtype"].itemsize > 2**25, row
    assert sum(row["size"] != SIZES[0] for row in rows) > 100 and sum(row["offset"] == OFFSETS[-1] for row in rows) > 50


@pytest.mark.core_model
def test_a_key_variant_pair_writes_of_its_buffer_what_it_reads():
    """A pair that needs a larger buffer than the source's own has it written as far as the pair
    reads (``reach``, in the items of the source made for it), and no further: less than a million
    items but for the stride variant of a vector past 2**24 elements, which reads them all."""
    met = 0
    for row in situations():
        s = source_of(row)
        for field, change, both in key_variants(s):
            if "reach" not in both:
                continue
            met += 1
            a = {**s, **both}
            assert all(_end(g) * g["dtype"].itemsize <= both["reach"] * a["dtype"].itemsize
                       for g in (a, {**a, **change})), (row, field)
            whole_vector = field == "stride" and row["shape"] == "vector" and row["size"] != SIZES[0]
            assert whole_vector or both["reach"] - (a["offset"] - a["offset"] % PERIOD) < 2**20, (row, field)
    assert met > 100


@pytest.mark.parametrize("atom", ["more than 2**24 elements", "an offset past 2**24", "a storage past 2**25 bytes"])
@pytest.mark.parametrize("guard", ["liveness", "key: shape", "key: version"])
def test_a_guard_skipped_only_at_scale_is_killed(atom, guard):
    """A correct cache except for a source of tens of millions of elements, or deep into a large
    buffer: the probes meet those sizes (sources that cost what they span)."""
    edits = (IMPORT_TORCH, *GUARDS[guard][2](ATOMS["scale"][atom].format(t="t" if guard.startswith("key") else "source")))
    cls = build(Mutant("at_scale", f"{GUARDS[guard][0]}, when {atom}", edits))
    report = probe("at_scale", cls, Level.L2, contract="lru")
    assert report.failure is not None, f"{guard} skipped when {atom} survived the probes"


@pytest.mark.core_model
@pytest.mark.parametrize("which", ["long-lived", "filled large"])
def test_the_long_lived_and_the_large_cache_meet_every_value_after_their_history(which):
    """The row whose cache has had 2**16 + 5 inserts, and the row that fills a cache past 10,000
    entries, each go on in that cache (made once) with situations that hold every value of every
    other property, each a possible row. The large one stays full: its entries kept, topped up, never
    cleared, its recency judged in the row alone (which fills it twice)."""
    row = next(row for row in situations() if (row["history"] == LONGEST if which == "long-lived"
                                                 else row["max_size"] == str(FILLED_LARGE_SIZE)))
    after = LIVED_ON if which == "long-lived" else FILLED_ON
    steps = row_steps(row, "Cache", Level.L2, "lru")
    text = "\n".join(code for _, code in steps)
    assert text.count("Clocked(Cache(") == 1 and text.count("# then, in the same cache:") == len(after)
    assert text.count("fill(65541") == (which == "long-lived")
    for elapsed in PROPERTIES["elapsed"]:  # at each of the cache's ages, which only grow
        at_age = [other for other in after if other["elapsed"] == elapsed]
        for name in set(PROPERTIES) - {"max_size", "history", "elapsed"}:
            assert {other[name] for other in at_age} == set(PROPERTIES[name]), (elapsed, name)
    assert [other["elapsed"] for other in after] == sorted((other["elapsed"] for other in after),
                                                           key=PROPERTIES["elapsed"].index)
    assert all(_possible(other) and other["max_size"] == row["max_size"] for other in after)
    if which == "filled large":
        own, going_on = text.split("# then, in the same cache:", 1)
        assert "cache.clear()" in own and "cache.clear()" not in going_on and "fillers.clear()" not in going_on
        assert going_on.count("fill(max_size - len(cache), 'kept full')") == len(after)
        # at L0 a dead source's entry may hit: the situations that meet them there start at L1
        assert "# then, in the same cache:" not in "\n".join(code for _, code in row_steps(row, "Cache", Level.L0, "lru"))


@pytest.mark.parametrize("dtype", ["int8", "uint64"])
def test_the_bound_skipped_past_10000_entries_for_one_dtype_is_killed(dtype):
    """A correct cache except that, once it holds more than 10,000 entries, a source of one dtype
    evicts nothing: the large cache's situations put every dtype into it full (its own row's sources
    are float32 alone, and these passed every row before)."""
    predicate = f"(source.dtype == torch.{dtype}) and ({_atom('max_size > 10000').format(c='self')})"
    cls = build(Mutant("large_bound", f"the bound, when more than 10,000 entries and {dtype}",
                       (IMPORT_TORCH, *GUARDS["bound"][2](predicate))))
    report = probe("large_bound", cls, Level.L2, contract="lru", only=lambda row: row["max_size"] == str(FILLED_LARGE_SIZE))
    assert report.failure is not None and "entries held, max_size 10001" in report.failure.message


@pytest.mark.core_model
def test_every_value_meets_every_pair_of_a_dtype_and_a_rank():
    """Strength 3 where it is cheapest to have: each value of each other property that can go with a
    dtype and a rank (with some shape of that rank, in a small new cache) meets both in some row. The
    rank is the source's: a broadcast dimension that takes a source past 2**24 elements adds one."""
    rows = triples()
    assert set(map(str, rows)) <= set(map(str, situations()))
    group = {rank: name for name, ranks in RANK_GROUPS.items() for rank in ranks}
    met = {(row["dtype"], group[rank_of(row)], name, row[name]) for row in rows for name in PROPERTIES}
    for dtype in PROPERTIES["dtype"]:
        for rank, ranks in RANK_GROUPS.items():
            for name in set(PROPERTIES) - {"dtype", "shape", "max_size", "history"}:
                for value in PROPERTIES[name]:
                    rows_of_it = ({**SMALL_NEW, "dtype": dtype, "shape": shape, name: value} for shape in SHAPES)
                    if any(_possible(row) and rank_of(row) in ranks for row in rows_of_it):
                        assert (dtype, rank, name, value) in met, (dtype, rank, name, value)
    assert all(_possible(row) for row in rows) and len(rows) < 1000


@pytest.mark.core_model
def test_a_layout_of_one_rank_never_meets_a_broadcast_dimension():
    """channels_last is a 4-D layout: behind a broadcast dimension (a source past 2**24 elements) the
    source is 5-D and no longer channels_last, so no row pairs them (the format rows once did)."""
    for row in situations():
        assert not (row["layout"] in ONE_RANK_LAYOUTS and row["size"] != SIZES[0]), describe(row)
        assert rank_of(row) == len(source_of(row)["shape"])


@pytest.mark.parametrize("guard, atoms", [
    ("key: address", ("dtype float32", "rank 0", "an inference tensor")),
    ("key: neg bit", ("not rank >= 3", "dtype complex32", "requires grad")),
    ("recency", ("not up an hour", "rank 0", "shared memory"))])
def test_a_guard_skipped_for_three_properties_at_once_is_killed_by_the_triples(guard, atoms):
    """A correct cache except where a dtype or a rank and two more properties hold at once: no pairwise
    row need meet all three (these three survived every row before the triples)."""
    assert _failure_in(triples(), guard, atoms) is not None, f"{guard} skipped when {atoms} survived the triples"


def _failure_in(rows, guard: str, atoms: tuple):
    """The probes' first failure, in ``rows`` alone, of ``hardened`` with ``guard`` skipped where all ``atoms`` hold."""
    t, c = ("t", None) if guard.startswith("key") else ("source", "self")
    predicate = " and ".join(f"not ({_atom(a[4:]).format(t=t, c=c)})" if a.startswith("not ")
                             else f"({_atom(a).format(t=t, c=c)})" for a in atoms)
    extra = [UP_SINCE] if any("up an" in a for a in atoms) else []
    extra += [COUNT_CALLS] if any("calls" in a for a in atoms) else []
    cls = build(Mutant("skipped_when", f"{guard}, when {' and '.join(atoms)}",
                       (IMPORT_TORCH, *extra, *GUARDS[guard][2](predicate))))
    mine = {str(row) for row in rows}
    return probe("skipped_when", cls, Level.L2, contract="lru", only=lambda row: str(row) in mine).failure


def test_every_value_meets_each_one_rank_format_with_each_of_its_shapes():
    rows = formats()
    assert set(map(str, rows)) <= set(map(str, situations())) and all(_possible(row) for row in rows)
    met = {(row["layout"], row["shape"], name, row[name]) for row in rows for name in PROPERTIES}
    for layout in ONE_RANK_LAYOUTS:
        for shape in (s for s in SHAPES if len(SHAPES[s]) in LAYOUTS[layout]):
            for name in set(PROPERTIES) - {"layout", "shape", "max_size", "history"}:
                for value in PROPERTIES[name]:
                    if _possible({**SMALL_NEW, "layout": layout, "shape": shape, name: value}):
                        assert (layout, shape, name, value) in met, (layout, shape, name, value)


@pytest.mark.parametrize("guard, atoms", [
    ("storage identity", ("dtype float64", "channels_last", "odd size")),
    ("recheck", ("channels_last", "not up an hour", "odd size"))])
def test_a_guard_skipped_for_a_memory_format_a_shape_and_one_more_is_killed_by_the_format_rows(guard, atoms):
    """channels_last exists at rank 4 alone, and an odd element count there is one shape: these two (of
    seed 2's generated mutants) survived every other row."""
    assert _failure_in(formats(), guard, atoms) is not None, f"{guard} skipped when {atoms} survived the format rows"


def test_a_guard_skipped_past_2_16_calls_for_one_dtype_in_a_cache_up_an_hour_is_killed():
    """Seed 3's generated mutant that survived when the long-lived cache met each value once, at
    whatever age: its situations now meet every value at each age."""
    atoms = ("more than 2**16 calls", "dtype complex64", "up an hour")
    rows = [row for row in situations() if row["history"] == LONGEST]
    assert _failure_in(rows, "storage identity", atoms) is not None


@pytest.mark.parametrize("atom", ["requires grad", "rank 0", "dtype float8_e4m3fn"])
def test_a_guard_skipped_past_2_16_calls_is_killed_with_any_value(atom):
    """A correct cache except once it has served 2**16 calls, and then only for one kind of source:
    the long-lived row's situations meet it (one row alone did not)."""
    predicate = f"({ATOMS['history']['more than 2**16 calls'].format(c='self')}) and ({_atom(atom).format(t='source')})"
    cls = build(Mutant("long_lived", f"the liveness guard, when more than 2**16 calls and {atom}",
                       (IMPORT_TORCH, COUNT_CALLS, *GUARDS["liveness"][2](predicate))))
    report = probe("long_lived", cls, Level.L2, contract="lru", only=lambda row: row["history"] == LONGEST)
    assert report.failure is not None, f"the liveness guard skipped past 2**16 calls for {atom} survived"


@pytest.mark.core_model
def test_drawn_rows_are_possible_rows_fixed_by_the_seed():
    """After the pairwise array, the budget's rows are drawn whole at random: each a row the probes
    can make, the same ones for the same --seed."""
    first = list(itertools.islice(drawn_rows(3), 200))
    assert first == list(itertools.islice(drawn_rows(3), 200)) != list(itertools.islice(drawn_rows(4), 200))
    assert all(_possible(row) and set(row) == set(PROPERTIES) for row in first)
    only_float32 = list(itertools.islice(drawn_rows(3, allowed=("float32",)), 50))
    assert {row["dtype"] for row in only_float32} == {"float32"}


def test_generated_mutants_of_every_guard_are_killed():
    """The first generated mutant of each guard (seed 0): every one falls to the probes."""
    firsts = {}
    for g in generate(60, seed=0):
        firsts.setdefault(g.guard, g)
    survivors = []
    for g in firsts.values():
        cls = build(g.mutant)
        if probe(g.name, cls, Level.L2, contract="lru").failure is None:
            survivors.append(f"{g.name}: {g.mutant.breaks}")
    assert not survivors


def test_a_probe_failure_is_a_snippet_that_fails_on_its_own(tmp_path):
    """The fingerprint cache at L1: the row's steps up to the false hit, run with plain
    python, fail with the same AssertionError."""
    report = probe("fingerprint", DESIGNS["fingerprint"], Level.L1)
    failure = report.failure
    assert failure is not None and failure.row is not None and "false hit" in failure.message
    assert failure.level == Level.L1 and failure.phase == "probes"
    script = tmp_path / "reproduce.py"
    script.write_text(failure.snippet)
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120,
                         cwd=Path(__file__).parent.parent)
    assert run.returncode == 1 and "AssertionError: false hit" in run.stderr, run.stderr[-2000:]


@pytest.mark.core_model
def test_the_docs_show_what_the_probes_vary():
    """docs/audit.md's account of the probes is the list rendered from ``PROPERTIES``."""
    page = (Path(__file__).parent.parent / "docs" / "audit.md").read_text()
    shown = page.split("<!-- probe-coverage: generated by harness.audit.probes.coverage_markdown() -->\n")[1]
    assert shown.split("<!-- /probe-coverage -->")[0] == coverage_markdown()


class Float32Only(DESIGNS["hardened"]):
    """The reference, refusing every dtype but float32, as some real caches do."""

    def get(self, source):
        assert source.dtype == torch.float32, "only float32 is supported"
        return super().get(source)

    def put(self, source, value):
        assert source.dtype == torch.float32, "only float32 is supported"
        super().put(source, value)


def test_a_cache_that_takes_one_dtype_meets_every_other_pair_in_it():
    """The audit names the dtypes a cache refuses; the probes then make only the others,
    in the refused dtypes' rows too, so every other pair still meets."""
    report = probe("Float32Only", Float32Only, Level.L2, contract="lru", allowed=("float32",), only=_small_caches)
    assert report.failure is None, report.failure.message
    assert report.rows == report.total > 0.8 * sum(map(_small_caches, situations()))
