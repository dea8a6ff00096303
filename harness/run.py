"""The reproduction matrix: models x pipeline scenarios x cache designs x seeds,
each request compared against a cache-free run of the same prompt and seed."""

from __future__ import annotations

import base64
import io
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import numpy as np
import torch

from cache_impl import resolve
from harness.environment import describe
from harness.metrics import compare_outputs
from harness.results import point_latest, write_json
from repro.models import VideoModel, load_model
from repro.models.toy import DEFAULT_PROMPTS
from repro.scenarios import INCONCLUSIVE
from repro.serving import STRATEGIES, address_events, cuda_memory_history, serve

CONTAMINATED, CLEAN = "contaminated", "clean"  # request verdicts; INCONCLUSIVE as in the catalogue


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

    @property
    def scenarios(self) -> list[str]:
        """Every scenario of the plan, in first-seen order."""
        return list(dict.fromkeys(s for scenarios in self.models.values() for s in scenarios))

    def build(self, spec: str) -> VideoModel:
        return load_model(spec, self.device, steps=self.steps, preset=self.preset, dtype=self.dtype)


def encode_clip(frames: torch.Tensor) -> str:
    """(T, H, W, 3) uint8 frames -> base64 of a compressed .npy, so results.json alone
    can re-render the report's GIFs."""
    buf = io.BytesIO()
    np.savez_compressed(buf, frames=frames.numpy())
    return base64.b64encode(buf.getvalue()).decode()


def decode_clip(text: str) -> np.ndarray:
    return np.load(io.BytesIO(base64.b64decode(text)))["frames"]


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


def run_matrix(plan: RunPlan, out_dir: Path, progress=print, update_latest: bool = True,
               title: str = "Address-reuse report") -> dict:
    """Run every case, writing ``results.json`` after each one. Returns the results."""
    out_dir.mkdir(parents=True, exist_ok=True)
    if update_latest:
        point_latest(out_dir)
    factories = {name: resolve(name) for name in plan.caches}
    results = {
        "title": title,
        "environment": describe(plan.device),
        "plan": {"caches": plan.caches, "models": plan.models, "scenarios": plan.scenarios, "seeds": plan.seeds,
                 "requests": plan.requests, "preset": plan.preset, "steps": plan.steps,
                 "prompts": list(plan.prompts)},
        "models": {},  # model name -> what it is (class, dimensions, dtype, steps, negative prompt)
        "records": [],
        "clips": {},  # clip id -> encoded frames, for the report
        "complete": False,
    }
    total = sum(len(s) for s in plan.models.values()) * len(plan.seeds) * len(plan.caches)
    done = 0
    started = time.perf_counter()
    for spec, scenarios in plan.models.items():
        if not scenarios:
            continue
        t0 = time.perf_counter()
        model = plan.build(spec)
        results["models"][model.name] = {**model.describe(), "negative_prompt": model.negative_prompt,
                                         "build_seconds": round(time.perf_counter() - t0, 2)}
        reference = References(model)
        for scenario in scenarios:
            for seed in plan.seeds:
                requests = case_requests(plan.prompts, seed, plan.requests)
                for prompt, rseed in requests:
                    reference(prompt, rseed)
                showcase: dict = {}  # request index -> {design: frames}
                for cache in plan.caches:
                    t0 = time.perf_counter()
                    records = run_case(model, factories[cache], scenario, cache, seed, requests, reference,
                                       plan.device, showcase)
                    results["records"].extend(records)
                    write_json(out_dir / "results.json", results)  # an interrupted run keeps this case
                    done += 1
                    t = tally(records)
                    progress(f"[{done:>3}/{total}] {model.name:6} {scenario:28} {cache:15} seed {seed}: "
                             f"{t['contaminated']}/{t['requests']} contaminated, {t['inconclusive']} inconclusive, "
                             f"min SSIM {t['ssim_min']:.3f} ({time.perf_counter() - t0:.1f}s)")
                _keep_showcase(results, model.name, scenario, seed, requests, showcase, reference)
        model.install_caches(None)
    results["complete"] = True
    results["environment"]["seconds"] = round(time.perf_counter() - started, 2)
    write_json(out_dir / "results.json", results)
    return results


def run_case(model, factory, scenario, cache, seed, requests, reference, device, showcase=None) -> list[dict]:
    """One scenario x design x seed: serve the requests back to back on fresh caches."""
    model.install_caches(factory)
    roles = model.roles
    strategy = STRATEGIES[scenario](model)
    checks: dict[int, KVCheck] = {}

    def start(index, sources):
        checks[index] = KVCheck(model, sources)
        return checks[index]

    records = []
    with cuda_memory_history(device) as history:
        served = list(serve(model, strategy, requests, on_request_start=start))
    for req in served:
        check = checks[req.index]
        ref_latents, ref_frames = reference(req.prompt, req.seed)
        # Only the first role's prompt differs between requests: a false hit on the
        # (constant) negative prompt's source would return equal K/V and prove nothing.
        reused = req.reused_from[roles[0]] is not None
        contaminated = check.false_hits > 0
        record = {
            "model": model.name, "scenario": scenario, "level": str(strategy.level), "cache": cache,
            "device": str(device),
            "seed": seed, "request_seed": req.seed, "request": req.index, "prompt": req.prompt,
            "address_reused": reused,
            "addresses": {role: hex(a) for role, a in req.addresses.items()},
            "reused_from": req.reused_from,
            "false_hits": check.false_hits, "kv_lookups": check.lookups, "kv_equal": check.false_hits == 0,
            **compare_outputs(ref_latents, ref_frames, req.latents, req.frames),
            "cache_stats": req.stats, "entries_after": req.entries_after,
            "entries_dropped": req.entries_dropped,
            "verdict": CONTAMINATED if contaminated else (CLEAN if reused else INCONCLUSIVE),
        }
        if "snapshot" in history:
            record["allocator_events"] = {role: address_events(history["snapshot"], a)
                                          for role, a in req.addresses.items()}
        elif device.type == "cuda":
            record["allocator_events"] = {"unavailable": history.get("unavailable", "")}
        records.append(record)
        if showcase is not None:
            showcase.setdefault(req.index, {})[cache] = (req.frames, contaminated)
    return records


def _keep_showcase(results, model, scenario, seed, requests, showcase, reference) -> None:
    """Keep the frames of one request per model, scenario and seed for the report:
    the first one that some design contaminated, with every design's output."""
    for index in sorted(showcase):
        if any(bad for _, bad in showcase[index].values()):
            prompt, rseed = requests[index]
            key = f"{model}/{scenario}/seed{seed}/request{index}"
            results["clips"][key] = {
                "model": model, "scenario": scenario, "seed": seed, "request": index, "prompt": prompt,
                "previous_prompt": requests[index - 1][0] if index else None,
                "reference": encode_clip(reference(prompt, rseed)[1]),
                "designs": {c: {"frames": encode_clip(f), "contaminated": bad}
                            for c, (f, bad) in showcase[index].items()},
            }
            return


REPORTS = Path(__file__).resolve().parent.parent / "reports"


def new_run_dir(root: Path = REPORTS) -> Path:
    return root / datetime.now().strftime("%Y%m%d-%H%M%S")


def tally(records: list[dict]) -> dict:
    """Counts over some request records: contaminated, inconclusive, all, lowest SSIM."""
    return {"contaminated": sum(r["verdict"] == CONTAMINATED for r in records),
            "inconclusive": sum(r["verdict"] == INCONCLUSIVE for r in records),
            "requests": len(records),
            "ssim_min": min(r["ssim_min"] for r in records)}


def model_of(record: dict) -> str:
    """The model a record was served by (records written before models existed: the toy)."""
    return record.get("model", "toy")


def rows(records: list[dict]) -> list[tuple[str, str]]:
    """(model, scenario) pairs in the order the records have them."""
    return list(dict.fromkeys((model_of(r), r["scenario"]) for r in records))


def summary_table(records: list[dict], caches: list[str]) -> str:
    """(model, scenario) x design: contaminated/total, inconclusive, min SSIM."""
    width = max(16, *(len(c) + 2 for c in caches))
    lines = [f"{'model':7}{'scenario':30}" + "".join(f"{c:>{width}}" for c in caches),
             f"{'':37}" + "".join(f"{'bad/n inc ssim':>{width}}" for _ in caches)]
    for m, s in rows(records):
        row = f"{m:7}{s:30}"
        for c in caches:
            rs = [r for r in records if model_of(r) == m and r["scenario"] == s and r["cache"] == c]
            if not rs:
                row += f"{'-':>{width}}"
                continue
            t = tally(rs)
            cell = f"{t['contaminated']}/{t['requests']} {t['inconclusive']} {t['ssim_min']:.2f}"
            row += f"{cell:>{width}}"
        lines.append(row)
    return "\n".join(lines)
