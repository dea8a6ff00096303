"""The reproduction matrix: models x pipeline scenarios x cache designs x seeds,
each request compared against a cache-free run of the same prompt and seed."""

from __future__ import annotations

import dataclasses
import itertools
import sys
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import torch

from cache_impl import DESIGNS, declared_level, resolve
from harness.environment import REPORTS, ROOT, describe
from harness.report.metrics import compare_outputs
from harness.report.results import (CLEAN, CONTAMINATED, INCONCLUSIVE, CacheInfo, Clip, ClipDesign, Record, Results,
                             encode_clip, save, tally)
from harness.sanitize import runtime as sanitizer
from repro.guard import DEFAULT_TIMEOUT, timed
from repro.models import VideoModel, load_model
from repro.models.toy import DEFAULT_PROMPTS
from repro.serving import STRATEGIES, address_events, cuda_memory_history, serve


@dataclass
class RunPlan:
    caches: list[str]
    models: dict[str, list[str]]  # model spec -> the pipeline scenarios it is served in
    seeds: list[int]
    requests: int
    device: torch.device
    steps: int | None = None  # denoise steps (None: each model's default)
    preset: str = "tiny"  # the toy's size
    dtype: torch.dtype | None = None  # None: each model's default
    prompts: tuple[str, ...] = DEFAULT_PROMPTS
    call_timeout: float | None = DEFAULT_TIMEOUT  # longest call into a user's cache (None or 0: no limit)

    @property
    def scenarios(self) -> list[str]:
        """Every scenario of the plan, in first-seen order."""
        return list(dict.fromkeys(s for scenarios in self.models.values() for s in scenarios))

    def build(self, spec: str) -> VideoModel:
        return load_model(spec, self.device, steps=self.steps, preset=self.preset, dtype=self.dtype)


class References:
    """Cache-free runs of ``(prompt, seed)``, computed once: (latents, frames)."""

    def __init__(self, model: VideoModel):
        self.model = model
        self._done: dict = {}

    def __call__(self, prompt: str, seed: int):
        if (prompt, seed) not in self._done:
            model = self.model
            with torch.no_grad(), model.cache_free():
                latents = model.generate(model.encode(prompt), seed)
            self._done[(prompt, seed)] = (latents, model.decode(latents))
        return self._done[(prompt, seed)]


def case_requests(prompts, seed: int, count: int) -> list[tuple[str, int]]:
    """The back-to-back requests of one case: prompts in turn, a noise seed each."""
    return [(prompts[i % len(prompts)], seed * 1000 + i) for i in range(count)]


class KVCheck:
    """Per request: compares every K/V the model uses with the request's own
    (computed cache-free from its own prompt sources), counting mismatches."""

    def __init__(self, model: VideoModel, sources: dict):
        self.own = {role: model.compute_kv(src) for role, src in sources.items()}
        self.lookups = 0
        self.false_hits = 0

    def __call__(self, step, block, role, k, v):
        self.lookups += 1
        own_k, own_v = self.own[role][block]
        if not (torch.equal(k, own_k) and torch.equal(v, own_v)):
            self.false_hits += 1


def describe_cache(spec: str, factory) -> CacheInfo:
    """What a report needs to know about a cache, taken once, at run time."""
    level = declared_level(factory)
    where = getattr(factory, "__module__", None) or type(factory).__module__
    name = getattr(factory, "__qualname__", None) or type(factory).__qualname__
    module = sys.modules.get(where)
    source = getattr(module, "__file__", None)
    if source:
        try:
            source = str(Path(source).resolve().relative_to(ROOT))
        except ValueError:
            source = str(Path(source).resolve())
    return CacheInfo(spec=spec, declared_level=str(level) if level is not None else None,
                     provenance=f"{where}.{name}" + (f" ({source})" if source else ""))


def headline_pair(caches: list[str]) -> dict:
    """The pair a report leads with: the pre-fix cache before and the seed fix after when
    both ran, else the first two caches (one cache: it is both)."""
    if "fingerprint" in caches and "weakref" in caches:
        return {"before": "fingerprint", "after": "weakref"}
    return {"before": caches[0], "after": caches[1] if len(caches) > 1 else caches[0]}


def run_matrix(plan: RunPlan, out_dir: Path, progress=print, title: str = "Address-reuse report",
               kind: str = "repro", pair: dict | None = None) -> Results:
    """Run every case, writing ``results.json`` after each one (an interrupted run
    keeps the cases it finished). Returns the results."""
    out_dir.mkdir(parents=True, exist_ok=True)
    factories = {name: resolve(name) for name in plan.caches}
    # A user's cache may hang: its calls get a time limit. The designs here are known not to.
    served = {name: f if name in DESIGNS else timed(f, plan.call_timeout, name) for name, f in factories.items()}
    results = Results(
        title=title, kind=kind, environment=describe(plan.device),
        plan={"caches": plan.caches, "models": plan.models, "scenarios": plan.scenarios, "seeds": plan.seeds,
              "requests": plan.requests, "preset": plan.preset, "steps": plan.steps, "prompts": list(plan.prompts)},
        caches={name: describe_cache(name, f) for name, f in factories.items()},
        pair=pair or headline_pair(plan.caches))
    total = sum(len(s) for s in plan.models.values()) * len(plan.seeds) * len(plan.caches)
    done = 0
    started = time.perf_counter()
    for spec, scenarios in plan.models.items():
        if not scenarios:
            continue
        t0 = time.perf_counter()
        model = plan.build(spec)
        results.models[model.name] = {**model.describe(), "negative_prompt": model.negative_prompt,
                                      "build_seconds": round(time.perf_counter() - t0, 2)}
        reference = References(model)
        for scenario in scenarios:
            for seed in plan.seeds:
                requests = case_requests(plan.prompts, seed, plan.requests)
                for prompt, rseed in requests:
                    reference(prompt, rseed)
                showcase: dict = {}  # request index -> {design: (frames, verdict)}
                for cache in plan.caches:
                    t0 = time.perf_counter()
                    records = run_case(model, served[cache], scenario, cache, seed, requests, reference,
                                       plan.device, showcase)
                    results.records.extend(records)
                    save(out_dir, results)  # an interrupted run keeps this case
                    done += 1
                    t = tally(records)
                    progress(f"[{done:>3}/{total}] {model.name:6} {scenario:28} {cache:15} seed {seed}: "
                             f"{t.contaminated}/{t.requests} contaminated, {t.inconclusive} inconclusive, "
                             f"min SSIM {t.ssim_min:.3f} ({time.perf_counter() - t0:.1f}s)")
                _keep_showcase(results, model.name, scenario, seed, requests, showcase, reference)
        model.install_caches(None)
    results.complete = True
    results.environment["seconds"] = round(time.perf_counter() - started, 2)
    save(out_dir, results)
    return results


def run_case(model, factory, scenario, cache, seed, requests, reference, device, showcase=None) -> list[Record]:
    """One scenario x design x seed: serve the requests back to back on fresh caches."""
    model.install_caches(factory)
    roles = model.roles
    strategy = STRATEGIES[scenario](model)
    checks: dict[int, KVCheck] = {}

    def start(index, sources):
        # Under the sanitizer, a stale match names the request it happened in.
        sanitizer.set_label(f"{model.name} {scenario} {cache} seed {seed} request {index}")
        checks[index] = KVCheck(model, sources)
        return checks[index]

    records = []
    with cuda_memory_history(device) as history:
        # Each request is compared while it is live: when the loop asks for the next
        # one, its tensors are freed and the next prompt encoded at once, as a server does.
        for req in serve(model, strategy, requests, on_request_start=start):
            check = checks.pop(req.index)
            ref_latents, ref_frames = reference(req.prompt, req.seed)
            # Only the first role's prompt differs between requests: a false hit on the
            # (constant) negative prompt's source would return equal K/V and prove nothing.
            reused = req.reused_from[roles[0]] is not None
            records.append(Record(
                model=model.name, scenario=scenario, level=str(strategy.level), cache=cache, device=str(device),
                seed=seed, request_seed=req.seed, request=req.index, prompt=req.prompt, address_reused=reused,
                addresses={role: hex(a) for role, a in req.addresses.items()}, reused_from=req.reused_from,
                false_hits=check.false_hits, kv_lookups=check.lookups, kv_equal=check.false_hits == 0,
                **compare_outputs(ref_latents, ref_frames, req.latents, req.frames),
                verdict=CONTAMINATED if check.false_hits else (CLEAN if reused else INCONCLUSIVE),
                cache_stats=req.stats, entries_after=req.entries_after, entries_dropped=req.entries_dropped))
            if showcase is not None:
                showcase.setdefault(req.index, {})[cache] = (req.frames.numpy().copy(), records[-1].verdict)
            del check, req
    sanitizer.set_label(None)
    if "snapshot" in history:  # the caching allocator's own trace at each prompt address
        records = [dataclasses.replace(r, allocator_events={
            role: address_events(history["snapshot"], int(a, 16)) for role, a in r.addresses.items()})
            for r in records]
    elif device.type == "cuda":
        records = [dataclasses.replace(r, allocator_events={"unavailable": history.get("unavailable", "")})
                   for r in records]
    return records


def _keep_showcase(results: Results, model, scenario, seed, requests, showcase, reference) -> None:
    """Keep the frames of one request per model and scenario for the report, from the
    first seed that has one: the first request that some design contaminated (the
    pair's before first), with the output of the pair's two designs. That is what the
    report shows; more seeds and designs would only make results.json larger."""
    before, after = results.pair["before"], results.pair["after"]
    if any(c.model == model and c.scenario == scenario for c in results.clips.values()):
        return
    contaminated = [i for i in sorted(showcase) if any(v == CONTAMINATED for _, v in showcase[i].values())]
    by_before = [i for i in contaminated if showcase[i].get(before, (None, ""))[1] == CONTAMINATED]
    for index in (by_before or contaminated)[:1]:
        prompt, rseed = requests[index]
        results.clips[f"{model}/{scenario}/seed{seed}/request{index}"] = Clip(
            model=model, scenario=scenario, level=str(STRATEGIES[scenario].scenario.level), seed=seed,
            request=index, prompt=prompt, previous_prompt=requests[index - 1][0] if index else None,
            reference=encode_clip(reference(prompt, rseed)[1].numpy()),
            designs={c: ClipDesign(frames=encode_clip(f), verdict=v) for c, (f, v) in showcase[index].items()
                     if c in (before, after)})




def new_run_dir(root: Path = REPORTS) -> Path:
    """A fresh run folder named by the time, created here so two runs started in the
    same second never share one (the second gets a ``-2`` suffix)."""
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    root.mkdir(parents=True, exist_ok=True)
    for n in itertools.count(1):
        folder = root / (stamp if n == 1 else f"{stamp}-{n}")
        try:
            folder.mkdir()
            return folder
        except FileExistsError:
            continue
    raise AssertionError("unreachable")


def summary_table(results: Results) -> str:
    """(model, scenario) x design: contaminated/total, inconclusive, min SSIM."""
    caches = list(results.caches)
    width = max(16, *(len(c) + 2 for c in caches))
    lines = [f"{'model':7}{'scenario':30}" + "".join(f"{c:>{width}}" for c in caches),
             f"{'':37}" + "".join(f"{'bad/n inc ssim':>{width}}" for _ in caches)]
    for m, s in results.rows():
        row = f"{m:7}{s:30}"
        for c in caches:
            rs = results.records_of(m, s, c)
            if not rs:
                row += f"{'-':>{width}}"
                continue
            t = tally(rs)
            cell = f"{t.contaminated}/{t.requests} {t.inconclusive} {t.ssim_min:.2f}"
            row += f"{cell:>{width}}"
        lines.append(row)
    return "\n".join(lines)
