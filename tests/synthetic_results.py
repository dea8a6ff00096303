"""A small synthetic run (no model runs) for the report and bad-input tests: three
caches, three scenarios, one showcased clip per contaminated scenario."""

from __future__ import annotations

import numpy as np

from harness.report.results import (CLEAN, CONTAMINATED, INCONCLUSIVE, CacheInfo, Clip, ClipDesign, Record, Results,
                             encode_clip)

T, H, W = 4, 12, 16
EVIL = '<script>alert("x")</script> & "quotes"'
OUTSIDE = "mypkg.some_long_package_name.caches:AVeryLongCacheClassNameIndeed"  # a spec that must wrap


def clip(value: int) -> np.ndarray:
    """A flat clip with a marker pixel that moves, so no two frames are the same."""
    frames = np.full((T, H, W, 3), value, dtype=np.uint8)
    for t in range(T):
        frames[t, 0, t] = 255 - value
    return frames


def record(cache, scenario, level, request, verdict, ssim=1.0, prompt="red circle moving right"):
    return Record(
        model="toy", scenario=scenario, level=level, cache=cache, device="cpu", seed=0, request_seed=request,
        request=request, prompt=prompt, address_reused=verdict != INCONCLUSIVE,
        addresses={"positive": hex(0x1000 + request), "negative": "0x2000"},
        reused_from={"positive": None if verdict == INCONCLUSIVE else f"request {request - 1} (positive)",
                     "negative": None},
        false_hits=12 if verdict == CONTAMINATED else 0, kv_lookups=12, kv_equal=verdict != CONTAMINATED,
        latents_equal=verdict != CONTAMINATED, max_abs_err=0.0 if verdict != CONTAMINATED else 1.5,
        ssim_per_frame=[ssim] * T, ssim_mean=ssim, ssim_min=ssim, psnr=None, verdict=verdict)


# scenario -> (level, verdict of request 1 per cache)
OUTCOMES = {
    "freed_address_reused": ("L1", {"fingerprint": CONTAMINATED, OUTSIDE: CLEAN, "hardened": CLEAN}),
    "storage_swapped": ("L2", {"fingerprint": CONTAMINATED, OUTSIDE: CONTAMINATED, "hardened": CLEAN}),
    "natural_reuse": ("L1", {"fingerprint": INCONCLUSIVE, OUTSIDE: INCONCLUSIVE, "hardened": CLEAN}),
}


def synthetic_results() -> Results:
    records, clips = [], {}
    for scenario, (level, outcome) in OUTCOMES.items():
        for cache, verdict in outcome.items():
            records.append(record(cache, scenario, level, 0, INCONCLUSIVE))
            records.append(record(cache, scenario, level, 1, verdict, 0.11 if verdict == CONTAMINATED else 1.0,
                                   prompt=EVIL))
        if CONTAMINATED in outcome.values():
            clips[f"toy/{scenario}/seed0/request1"] = Clip(
                model="toy", scenario=scenario, level=level, seed=0, request=1, prompt=EVIL,
                previous_prompt="blue square moving down", reference=encode_clip(clip(200)),
                designs={c: ClipDesign(frames=encode_clip(clip(30 if v == CONTAMINATED else 200)), verdict=v)
                         for c, v in outcome.items()})
    return Results(
        title="Report " + EVIL, kind="repro",
        environment={"torch": "2.13.0", "device": "cpu", "device_name": "test cpu", "git_revision": "abc",
                     "allocator": {"backend": "test"}, "command": "pytest"},
        plan={"caches": ["fingerprint", OUTSIDE, "hardened"], "scenarios": list(OUTCOMES), "seeds": [0],
              "requests": 2, "preset": "tiny", "steps": 2},
        caches={"fingerprint": CacheInfo("fingerprint", "L0", "cache_impl.fingerprint_lru.FingerprintLRUCache"),
                OUTSIDE: CacheInfo(OUTSIDE, "L1", "mypkg.caches.AVeryLongCacheClassNameIndeed"),
                "hardened": CacheInfo("hardened", "L2", "cache_impl.hardened.HardenedCache")},
        pair={"before": "fingerprint", "after": OUTSIDE}, records=records, clips=clips, complete=True)
