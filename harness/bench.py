"""``make bench``: what each cache design costs, measured side by side in one process.

Per-call figures are medians over repeats, the designs interleaved round-robin
within each repeat so that machine noise falls on all of them alike; ratios are
medians of per-repeat ratios. Compare designs by the ratios from one run, not
across runs.
"""

from __future__ import annotations

import contextlib
import gc
import statistics
import tempfile
import time
from pathlib import Path

import torch

from cache_impl import DESIGNS
from harness.environment import REPORTS, describe
from harness.report.results import write_atomic, write_json
from harness.run import RunPlan, run_matrix
from repro.allocator import AddressArena
from repro.models import REAL_MODELS, STATS, load_model
from repro.models.toy import DEFAULT_PROMPTS

SHAPE = (1, 512, 64)  # a prompt's encoder states: 512 tokens (width shrunk; the key cost does not depend on it)
SIZES = (2, 64, 4096)


@contextlib.contextmanager
def _no_gc():
    """Timed sections run without the cyclic GC, as timeit's do: a collection
    landing in one design's turn is noise, not that design's cost. No collection
    here: a full one walks every object of the process (tenths of a second with
    torch loaded), so each sampler collects once, before its first section."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _rounds(names: list, repeats: int):
    """Round-robin order for each repeat, reversed every other one: noise and
    drift fall on every design alike, and none always runs first."""
    for r in range(repeats):
        yield names if r % 2 == 0 else names[::-1]


def interleaved(calls: dict, number: int, repeats: int) -> dict[str, list[float]]:
    """ns per call of each ``fn(arg)`` in ``calls`` (name -> (fn, arg)), one
    sample of ``number`` calls per name and repeat. The call is made directly,
    with no wrapper whose cost every design would share."""
    samples: dict[str, list[float]] = {name: [] for name in calls}
    gc.collect()
    with _no_gc():
        for order in _rounds(list(calls), repeats):
            for name in order:
                fn, arg = calls[name]
                start = time.perf_counter_ns()
                for _ in range(number):
                    fn(arg)
                samples[name].append((time.perf_counter_ns() - start) / number)
    return samples


def batched(setups: dict, repeats: int) -> dict[str, list[float]]:
    """ns per call for paths that consume their state (stale lookups, puts).
    Each setup returns ``(calls, n)``: a callable making n calls, timed as a whole."""
    samples: dict[str, list[float]] = {name: [] for name in setups}
    gc.collect()
    for order in _rounds(list(setups), repeats):
        for name in order:
            calls, n = setups[name]()
            with _no_gc():
                start = time.perf_counter_ns()
                calls()
                samples[name].append((time.perf_counter_ns() - start) / n)
    return samples


def medians(samples: dict[str, list[float]]) -> dict[str, float]:
    return {name: statistics.median(v) for name, v in samples.items()}


def paired_ratio(a: list[float], b: list[float]) -> float:
    """Median over repeats of a/b, each pair timed back to back: steadier on a
    noisy machine than a ratio of medians taken at different moments."""
    return statistics.median(x / y for x, y in zip(a, b, strict=True))


def lookup_samples(repeats: int = 201, number: int = 1_000, stale_entries: int = 256) -> tuple[dict, dict]:
    """Samples per lookup path and design, and notes on designs that miss a view."""
    caches, notes = {}, {}
    src, other = torch.randn(SHAPE), torch.randn(SHAPE)
    view = src.view(src.shape)  # a new view object of the same live tensor
    for name, factory in DESIGNS.items():
        caches[name] = factory(max_size=2)
        caches[name].put(src, torch.zeros(1))
        if caches[name].get(view) is None:
            notes[name] = "misses on view objects"
    paths = {"hit (same object)": src, "hit (new view object)": view, "miss": other}
    out = {path: interleaved({n: (c.get, arg) for n, c in caches.items()}, number, repeats)
           for path, arg in paths.items()}
    stale_repeats = max(repeats // 10, 1)  # each repeat is stale_entries lookups
    for path, rebind in (("stale (dead source)", False), ("stale (rebound source)", True)):
        out[path] = batched({n: _stale_setup(f, rebind, stale_entries) for n, f in DESIGNS.items()}, stale_repeats)
    return out, notes


def _stale_setup(factory, rebind: bool, n: int):
    """n entries whose sources were freed (or rebound with set_), then a fresh
    tensor at each old address: every lookup meets a stale entry."""
    def setup():
        cache = factory(max_size=n)
        arenas = [AddressArena((4, 4)) for _ in range(n)]
        sources = [a.fresh(torch.randn(4, 4)) for a in arenas]
        for s in sources:
            cache.put(s, torch.zeros(1))
        if rebind:
            for s in sources:
                s.set_(torch.empty(4, 4))
            setup.kept = sources
        del sources
        fresh = [a.fresh(torch.randn(4, 4)) for a in arenas]

        def calls():
            for t in fresh:
                cache.get(t)
        return calls, n
    return setup


def size_samples(repeats: int = 7, puts: int = 200, sizes: tuple = SIZES) -> tuple[dict, dict]:
    """put (each one evicting) and hit cost on a cache filled to max_size, every
    design and size interleaved in one loop; samples keyed (design, size)."""
    def put_setup(factory, size):
        def setup():
            cache = factory(max_size=size)
            pool = [torch.empty(4) for _ in range(size + puts)]
            for s in pool[:size]:
                cache.put(s, 0)

            def calls():  # holds the whole pool: every source stays alive, no entry goes stale
                for s in pool[size:]:
                    cache.put(s, 0)
            return calls, puts
        return setup

    gets, keep = {}, []
    for size in sizes:
        for name, factory in DESIGNS.items():
            cache = factory(max_size=size)
            pool = [torch.empty(4) for _ in range(size)]
            for s in pool:
                cache.put(s, 0)
            keep.append(pool)
            gets[name, size] = (cache.get, pool[size // 2])
    puts_ = batched({(n, size): put_setup(f, size) for size in sizes for n, f in DESIGNS.items()}, repeats)
    return puts_, interleaved(gets, 1_000, repeats * 5)


# Analytic FLOPs at real dimensions. The cached work per block is the K and V
# projections of the prompt; the rest of a block is assumed to be a Wan-style DiT
# block over the video tokens (assumptions stated, not measured).
REAL = {"blocks": 40, "dim": 5120, "text_tokens": 512, "text_dim": 4096, "ffn": 13824,
        "video_tokens": 32760}  # 81 frames at 480x832: 21x60x104 latents, 1x2x2 patches


def analytic_flops(r: dict = REAL) -> dict:
    d, n, text = r["dim"], r["video_tokens"], r["text_tokens"]
    cached = 2 * (2 * text * d * d)  # K and V projections of the prompt, per block
    text_proj = 2 * text * r["text_dim"] * d  # once per step
    block = (4 * 2 * n * d * d  # self-attention q, k, v, o
             + 2 * 2 * n * n * d  # self-attention scores and weighted sum
             + 2 * 2 * n * d * d  # cross-attention q, o
             + 2 * 2 * n * text * d  # cross-attention scores and weighted sum
             + 2 * 2 * n * d * r["ffn"]  # feed-forward
             + cached)
    total = r["blocks"] * block + text_proj
    saved = r["blocks"] * cached + text_proj
    return {"assumptions": r, "cached_flops_per_step": saved, "total_flops_per_step": total,
            "cached_share": saved / total}


def request_latency(model_spec: str, device: torch.device, preset: str = "tiny", requests: int = 21) -> dict:
    """Denoise latency of one request (generate, no decode), cached (hardened) vs
    cache-free, interleaved; the saving per step is the median of paired differences."""
    model = load_model(model_spec, device, preset=preset)
    model.install_caches(DESIGNS["hardened"])
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    sources = model.encode(DEFAULT_PROMPTS[0])
    times = {"cache-free": [], "cached (hardened)": []}
    for i in range(requests + 1):
        for label in (times if i % 2 == 0 else list(times)[::-1]):
            model.clear_cross_attention_cache()  # every request starts cold, as a new prompt does
            sync()
            start = time.perf_counter()
            with torch.no_grad():
                if label == "cache-free":
                    with model.cache_free():
                        model.generate(sources, seed=i)
                else:
                    model.generate(sources, seed=i)
            sync()
            if i:  # the first round warms up
                times[label].append(time.perf_counter() - start)
    free, cached = (statistics.median(times[k]) for k in times)
    saved = statistics.median(f - c for f, c in zip(*times.values()))
    return {"model": model.name, "preset": preset, "device": str(device), "steps": model.steps,
            "cache_free_ms": free * 1e3, "cached_ms": cached * 1e3,
            "saved_ms_per_step": saved * 1e3 / model.steps, "saved_share": saved / free}


def architecture_samples(models: tuple = REAL_MODELS, designs: tuple = tuple(DESIGNS), repeats: int = 7,
                         steps: int = 3) -> dict:
    """Per real architecture and design, one request at a time (cold caches, as a new
    prompt is): the cache's lookups (text and K/V, hits and misses) and the time the
    design saves per denoise step against cache-free. Every design and cache-free run
    interleaved per repeat, the order reversed every other one; the saving is the
    median of paired differences."""
    out = {}
    for spec in models:
        model = load_model(spec, torch.device("cpu"), steps=steps)
        sources = model.encode(DEFAULT_PROMPTS[0])
        times: dict = {label: [] for label in ("cache-free", *designs)}
        lookups: dict = {}
        for order in _rounds(list(times), repeats + 1):  # the first round warms up
            for label in order:
                model.install_caches(None if label == "cache-free" else DESIGNS[label])
                start = time.perf_counter()
                with torch.no_grad():
                    model.generate(sources, seed=0)
                elapsed = time.perf_counter() - start
                if model.caches():
                    lookups[label] = {k: model.handle.stats[k] for k in STATS}
                times[label].append(elapsed)
        model.install_caches(None)
        free = times["cache-free"][1:]
        out[spec] = {"class": type(model.transformer).__name__, "steps": steps,
                     "cache_free_ms": statistics.median(free) * 1e3, "designs": {}}
        for name in designs:
            stats = lookups[name]
            n = sum(stats.values())
            saved = statistics.median(f - c for f, c in zip(free, times[name][1:]))
            hits = stats["text_hits"] + stats["kv_hits"]
            out[spec]["designs"][name] = {**stats, "lookups": n, "hit_rate": hits / n,
                                          "saved_ms_per_step": saved * 1e3 / steps}
    return out


def _architecture_table(arch: dict, designs: list) -> list[str]:
    lines = ["### Per architecture and design (one request, cold caches, CPU, one thread)", "",
             "Lookups (text + K/V), hit rate, and time saved per denoise step against cache-free "
             "(median of paired differences; negative: the cache costs more than it saves).", "",
             "| model | cache-free ms | " + " | ".join(designs) + " |", "|---|---:|" + "---|" * len(designs)]
    for spec, row in arch.items():
        cells = [f"{d['text_hits'] + d['kv_hits']}/{d['lookups']} ({d['hit_rate']:.0%}), "
                 f"{d['saved_ms_per_step']:+.2f} ms" for d in (row["designs"][n] for n in designs)]
        lines.append(f"| {spec} ({row['class']}) | {row['cache_free_ms']:.1f} | " + " | ".join(cells) + " |")
    return lines + [""]


def matrix_seconds() -> float:
    """The default ``make repro`` matrix on CPU (the toy in every scenario, Helios in three)."""
    from harness.options import DEFAULT_MODELS
    from repro.serving import STRATEGIES
    models = {m: [s for s in STRATEGIES if only is None or s in only] for m, only in DEFAULT_MODELS.items()}
    plan = RunPlan(caches=list(DESIGNS), models=models, seeds=[0, 1], requests=3, device=torch.device("cpu"))
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        run_matrix(plan, Path(tmp), progress=lambda line: None)
        return time.perf_counter() - start


# The test-suite slice timed with and without ``--address-sanitize``: the designs' tests and the
# conformance suite, every design through the audit's scenarios (many keys taken, addresses reused).
SUITE_SLICE = ("tests/test_cache_impl.py", "tests/test_conformance.py")


def sanitizer_samples(pairs: int = 2) -> dict:
    """Seconds of the repro pipeline (``make repro``'s matrix, one seed, in this process) and of a
    test-suite slice (pytest in a fresh process), each without and with the sanitizer, the two
    timed back to back, in alternating order, ``pairs`` times."""
    import os
    import subprocess
    import sys

    from harness.options import DEFAULT_MODELS
    from repro.serving import STRATEGIES
    from harness.sanitize import sanitizing

    models = {m: [s for s in STRATEGIES if only is None or s in only] for m, only in DEFAULT_MODELS.items()}
    plan = RunPlan(caches=list(DESIGNS), models=models, seeds=[0], requests=3, device=torch.device("cpu"))
    root = Path(__file__).resolve().parent.parent

    def pipeline(sanitized: bool) -> float:
        with tempfile.TemporaryDirectory() as tmp:
            start = time.perf_counter()
            with sanitizing() if sanitized else contextlib.nullcontext():
                run_matrix(plan, Path(tmp), progress=lambda line: None)
            return time.perf_counter() - start

    def suite(sanitized: bool) -> float:
        argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:cacheprovider", *SUITE_SLICE]
        start = time.perf_counter()
        subprocess.run(argv + (["--address-sanitize"] if sanitized else []), cwd=root, capture_output=True,
                       env={**os.environ, "PYTHONPATH": str(root)}, check=True)
        return time.perf_counter() - start

    samples = {}
    for name, timed in (("repro pipeline", pipeline), ("test-suite slice", suite)):
        timed(False)  # warm-up, not counted: the first run imports and builds what later runs reuse
        off, on = [], []
        for r in range(pairs):
            for sanitized in ((False, True) if r % 2 == 0 else (True, False)):
                (on if sanitized else off).append(timed(sanitized))
        samples[name] = {"off_s": off, "on_s": on}
    return samples


def _table(title: str, rows: dict, columns: list, fmt=lambda v: f"{v:,.0f}") -> list[str]:
    lines = [f"### {title}", "", "| | " + " | ".join(str(c) for c in columns) + " |",
             "|---|" + "---:|" * len(columns)]
    for label, values in rows.items():
        lines.append(f"| {label} | " + " | ".join(fmt(values[c]) if c in values else "-" for c in columns) + " |")
    return lines + [""]


def run_bench(out_dir: Path = REPORTS / "bench", progress=print) -> dict:
    designs = list(DESIGNS)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    result = {"environment": describe(device)}
    progress("lookup paths ...")
    look_s, notes = lookup_samples()
    result["lookup"] = {"ns_per_call": {path: medians(v) for path, v in look_s.items()}, "notes": notes}
    progress("size sweep ...")
    put_s, get_s = size_samples()
    put_ns, get_ns = medians(put_s), medians(get_s)
    result["sizes"] = {"put_ns": {size: {n: put_ns[n, size] for n in designs} for size in SIZES},
                       "get_hit_ns": {size: {n: get_ns[n, size] for n in designs} for size in SIZES}}
    progress("request latency ...")
    # One torch thread, as python -m harness repro runs: the tiny models gain nothing from more,
    # and spinning threads on a shared machine would time the neighbours.
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    result["latency"] = [request_latency("toy", torch.device("cpu")), request_latency("helios", torch.device("cpu"))]
    if device.type == "cuda":
        result["latency"] += [request_latency("toy", device, preset="helios"), request_latency("helios", device)]
    progress("per architecture ...")
    result["architectures"] = architecture_samples()
    torch.set_num_threads(threads)
    result["flops"] = analytic_flops()
    progress("default repro matrix ...")
    result["matrix_seconds"] = matrix_seconds()
    progress("the sanitizer's overhead ...")
    sanitized = sanitizer_samples()
    result["sanitizer"] = {name: {**v, "off_median_s": statistics.median(v["off_s"]),
                                  "on_median_s": statistics.median(v["on_s"])} for name, v in sanitized.items()}
    look, sizes = result["lookup"]["ns_per_call"], result["sizes"]
    # (ratio, goal): each goal is an upper bound on a ratio of samples timed back to back
    checks = {
        "hardened hit / weakref hit": (
            paired_ratio(look_s["hit (same object)"]["hardened"], look_s["hit (same object)"]["weakref"]), 0.5),
        "hardened put at 4096 / put at 2": (
            paired_ratio(put_s["hardened", 4096], put_s["hardened", 2]), 2.0),
        "hardened miss / weakref miss": (paired_ratio(look_s["miss"]["hardened"], look_s["miss"]["weakref"]), 1.0),
        "hardened stale (dead) / weakref stale (dead)": (
            paired_ratio(look_s["stale (dead source)"]["hardened"], look_s["stale (dead source)"]["weakref"]), 1.0),
        **{f"{name} with the sanitizer / without": (paired_ratio(v["on_s"], v["off_s"]), 1.5)
           for name, v in sanitized.items()},
    }
    result["ratios"] = {k: {"ratio": r, "goal_at_most": g, "met": r <= g} for k, (r, g) in checks.items()}

    md = [f"## Cache benchmark ({result['environment']['device_name']}, {result['environment']['cpu_count']} cores, "
          f"torch {result['environment']['torch']})", "",
          "Medians over repeats, designs interleaved in one process; ns per call. Ratios: the median "
          "of per-repeat ratios, each pair timed back to back.", ""]
    md += _table("Lookup paths (max_size=2; stale paths: 256 entries)", look, designs)
    if result["lookup"]["notes"]:
        md += [", ".join(f"{k}: {v}" for k, v in result["lookup"]["notes"].items()),
               "weakref and fingerprint *hit* on a rebound source: that is the stale value, not a miss.", ""]
    md += _table("put (evicting) on a filled cache, by max_size", {d: {s: sizes["put_ns"][s][d] for s in SIZES}
                                                                    for d in designs}, list(SIZES))
    md += _table("get hit on a filled cache, by max_size", {d: {s: sizes["get_hit_ns"][s][d] for s in SIZES}
                                                            for d in designs}, list(SIZES))
    md += ["### Ratios from this run", ""] + [
        f"- {k}: {r:.2f} (goal <= {g}: {'met' if r <= g else 'NOT MET'})" for k, (r, g) in checks.items()] + [""]
    md += _architecture_table(result["architectures"], designs)
    md += ["### End to end", ""]
    for lat in result["latency"]:
        md.append(f"- {lat['model']} ({lat['preset']}) on {lat['device']}, one thread, {lat['steps']} steps: cache-free "
                  f"{lat['cache_free_ms']:.1f} ms, cached {lat['cached_ms']:.1f} ms per request; saves "
                  f"{lat['saved_ms_per_step']:.2f} ms per denoise step ({lat['saved_share']:.1%}).")
    if device.type != "cuda":
        md.append("- on CUDA (the toy's helios preset, the real Helios in bfloat16): not measured, no GPU here.")
    f = result["flops"]
    md += [f"- At real Helios dimensions the cached projections are {f['cached_flops_per_step'] / 1e12:.2f} "
           f"TFLOP of {f['total_flops_per_step'] / 1e15:.2f} PFLOP per step and branch: "
           f"{f['cached_share']:.2%} (analytic; {f['assumptions']['video_tokens']} video tokens assumed).",
           f"- Default `make repro` matrix: {result['matrix_seconds']:.1f} s after set-up."]
    md += [f"- {name}, without / with `address-reuse sanitize`: {v['off_median_s']:.1f} s / {v['on_median_s']:.1f} s "
           f"(medians of {len(v['off_s'])}; the ratio above is per pair)" for name, v in result["sanitizer"].items()]
    md += [f"  (repro pipeline: `make repro`'s matrix, one seed, in this process; test-suite slice: "
           f"pytest {' '.join(SUITE_SLICE)} in a fresh process, with --address-sanitize or not)", ""]
    text = "\n".join(md)
    out_dir.mkdir(parents=True, exist_ok=True)  # only now: a bench interrupted before leaves no empty folder
    write_json(out_dir / "bench.json", result)
    write_atomic(out_dir / "bench.md", text + "\n")
    print(text)
    return result
