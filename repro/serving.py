"""Back-to-back fake requests through one pipeline, as a server serves them.

Per request: a fresh prompt source (encoder states) for each of the model's
roles (positive and negative prompt), a run through the cache under test,
decoded frames, then everything released. Any :class:`repro.models.VideoModel`
can be served. A
*source strategy* decides how the next request's encoder states come to live
where the last request's did. Each strategy *is* a scenario of the tensor-level
catalogue (``repro.scenarios``) played through a model: it carries that scenario
object, its name and level, and uses the same allocator tools.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field

import torch

from cache_impl import Level, request_begins, request_ends
from repro.allocator import AddressArena, ReuseTracker
from repro.models import VideoModel
from repro import scenarios


class SourceStrategy:
    """Makes each request's encoder states and releases them afterwards."""

    scenario: scenarios.Scenario  # the catalogue's scenario this strategy plays
    inference = False  # run requests under torch.inference_mode() instead of no_grad()

    def __init__(self, model: VideoModel):
        self.model = model

    @property
    def name(self) -> str:
        return self.scenario.name

    @property
    def level(self) -> Level:
        return self.scenario.level

    def make(self, role: str, states: torch.Tensor) -> torch.Tensor:
        """The tensor the pipeline sees for this role, holding ``states``."""
        raise NotImplementedError

    def release(self, sources: dict) -> None:
        """End of request: drop (or otherwise give up) the sources."""
        sources.clear()

    def grad_mode(self):
        return torch.inference_mode() if self.inference else torch.no_grad()


class NaturalReuse(SourceStrategy):
    """The allocator decides: fresh tensors, freed at the end of each request."""

    scenario = scenarios.natural_reuse

    def make(self, role, states):
        return states  # the fake encoder's output, allocated by the allocator as a server's is


class FreedAddressReused(SourceStrategy):
    """Forced: every request's states are a fresh tensor at the previous one's address."""

    scenario = scenarios.freed_address_reused

    def __init__(self, model):
        super().__init__(model)
        self.arenas: dict[str, AddressArena] = {}

    def make(self, role, states):
        if role not in self.arenas:
            self.arenas[role] = AddressArena(states.shape, states.dtype, states.device)
        return self.arenas[role].fresh(states)


class StorageSwapped(FreedAddressReused):
    """Forced, and the old source stays alive: the server keeps it, rebinding its
    storage with ``set_()``, so its weakref never dies."""

    scenario = scenarios.storage_swapped

    def __init__(self, model):
        super().__init__(model)
        self.kept: list[torch.Tensor] = []

    def release(self, sources):
        for src in sources.values():
            src.set_(torch.empty_like(src))
            self.kept.append(src)
        sources.clear()


class PersistentBuffer(SourceStrategy):
    """One input buffer per role, refilled in place for every request (copy_ bumps its version)."""

    scenario = scenarios.persistent_buffer

    def __init__(self, model):
        super().__init__(model)
        self.buffers: dict[str, torch.Tensor] = {}

    def make(self, role, states):
        if role not in self.buffers:
            with self.grad_mode():
                self.buffers[role] = torch.empty_like(states)
        self.buffers[role].copy_(states)
        return self.buffers[role]


class PersistentBufferInference(PersistentBuffer):
    """The same under inference mode: no version counter, so the refill is invisible."""

    scenario = scenarios.persistent_buffer_inference
    inference = True


STRATEGIES = {s.scenario.name: s for s in (FreedAddressReused, NaturalReuse, StorageSwapped,
                                           PersistentBuffer, PersistentBufferInference)}


@dataclass
class ServedRequest:
    index: int
    prompt: str
    seed: int
    latents: torch.Tensor | None  # None once the next request was asked for
    frames: torch.Tensor | None
    addresses: dict  # role -> address of its prompt source
    reused_from: dict  # role -> which earlier request last held that address (None if fresh)
    stats: dict  # cache hits and misses during this request
    entries_after: int  # entries held by all caches at the end of the request
    entries_dropped: int  # entries the caches let go during the request: stale, or evicted by the bound
    evidence: dict = field(default_factory=dict)


def serve(model: VideoModel, strategy: SourceStrategy, requests: list[tuple[str, int]], on_request_start=None):
    """Serve ``(prompt, seed)`` requests back to back; yield a :class:`ServedRequest` each.

    It allocates as a one-worker server does: the caller inspects each request while
    it is still live (the generator is paused at the yield), and when the caller asks
    for the next one the request's tensors are released and the next prompt is encoded
    at once, with no other allocation in between. The yielded request's ``latents``
    and ``frames`` are dropped at that point too; copy what you keep.

    ``on_request_start(index, sources)`` may return a per-request K/V observer
    (called as ``observe(step, block, role, k, v)``), e.g. to compare the K/V
    used against the request's own.
    """
    tracker = ReuseTracker()
    for index, (prompt, seed) in enumerate(requests):
        with strategy.grad_mode():
            sources = {role: strategy.make(role, states) for role, states in model.encode(prompt).items()}
            # Evidence of where each source lay, as bare numbers (int): comparing a freed
            # address with a new one is the point of these records.
            addresses = {role: int(src.data_ptr()) for role, src in sources.items()}
            reused_from = {role: tracker.reused_from(addr) for role, addr in addresses.items()}
            request_observe = on_request_start(index, sources) if on_request_start else None
            before = dict(model.stats)
            held_before = sum(len(c) for c in model.caches())
            for cache in model.caches():
                request_begins(cache)
            latents = model.generate(sources, seed, request_observe)
            for cache in model.caches():
                request_ends(cache)
            frames = model.decode(latents)
        del request_observe
        stats = {k: model.stats[k] - before[k] for k in before}
        held_after = sum(len(c) for c in model.caches())
        inserted = stats["text_misses"] + stats["kv_misses"]  # every miss inserts one entry
        served = ServedRequest(index, prompt, seed, latents, frames, addresses, reused_from, stats,
                               held_after, held_before + inserted - held_after)
        del latents, frames
        yield served
        served.latents = served.frames = None  # the request is over: release everything it made
        for role, addr in addresses.items():
            tracker.freed(addr, f"request {index} ({role})")
        strategy.release(sources)


@contextlib.contextmanager
def cuda_memory_history(device: torch.device):
    """Record the CUDA caching allocator's history while serving; yields a dict
    that gets ``snapshot`` (or ``unavailable``) on exit. No-op off CUDA."""
    box: dict = {}
    if device.type != "cuda":
        box["unavailable"] = "not on CUDA"
        yield box
        return
    try:
        torch.cuda.memory._record_memory_history(max_entries=200_000)
    except Exception as exc:  # noqa: BLE001 - evidence is best effort, the run goes on
        box["unavailable"] = f"record_memory_history failed: {exc}"
        yield box
        return
    try:
        yield box
    finally:
        try:
            box["snapshot"] = torch.cuda.memory._snapshot()
        finally:
            torch.cuda.memory._record_memory_history(enabled=None)


def address_events(snapshot: dict, address: int, limit: int = 8) -> list[dict]:
    """The allocator's own trace entries (alloc / free) at one address."""
    events = []
    for device_trace in snapshot.get("device_traces", []):
        for entry in device_trace:
            if entry.get("addr") == address and entry.get("action") in (
                    "alloc", "free_requested", "free_completed"):
                events.append({"action": entry["action"], "addr": hex(address), "size": entry.get("size")})
    return events[-limit:]
