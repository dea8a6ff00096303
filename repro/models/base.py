"""What the serving loop, the reference runs, the K/V check, the bench and the report
need from a video model, and nothing more.

A model keeps its prompt *sources* (the encoder states each role's cache is keyed
by) outside itself: the serving loop makes them, places them where a source
strategy says, hands them to ``generate`` and frees them afterwards.
"""

from __future__ import annotations

import contextlib
from typing import Callable

import torch

# observe(step, block, role, k, v): called with the K/V each cross-attention really used
Observer = Callable[[int, int, str, torch.Tensor, torch.Tensor], None]

STATS = ("text_hits", "text_misses", "kv_hits", "kv_misses")


class VideoModel:
    """The model seam. Subclasses set the attributes and implement the methods.

    Attributes:
        name: what ``results.json`` records (``toy``, a real architecture such as ``helios``, or a spec).
        device: where it runs.
        steps: denoise steps per request.
        roles: the prompt sources of one request, in order; ``roles[0]`` carries the
            request's prompt, the others are the same in every request (e.g. the
            negative prompt of classifier-free guidance).
        negative_prompt: the prompt of the other roles, for the report.
        stats: running counts of cache hits and misses, keys :data:`STATS`.
    """

    name = ""
    device = torch.device("cpu")
    steps = 1
    roles: tuple[str, ...] = ("positive", "negative")
    negative_prompt = ""

    def encode(self, prompt: str) -> dict[str, torch.Tensor]:
        """role -> a fresh prompt source (encoder states) for a request with ``prompt``."""
        raise NotImplementedError

    def generate(self, sources: dict[str, torch.Tensor], seed: int, observe: Observer | None = None) -> torch.Tensor:
        """Denoise from noise seeded by ``seed``, conditioned on ``sources``; returns latents."""
        raise NotImplementedError

    def decode(self, latents: torch.Tensor) -> torch.Tensor:
        """Latents -> RGB frames ``(T, H, W, 3)`` uint8 on the CPU."""
        raise NotImplementedError

    def compute_kv(self, source: torch.Tensor) -> list[tuple[torch.Tensor, torch.Tensor]]:
        """The cross-attention K/V per block for one source, computed cache-free."""
        raise NotImplementedError

    def install_caches(self, factory: Callable | None, max_size: int = 2) -> None:
        """Fresh caches from ``factory(max_size=...)``; ``None`` removes them."""
        raise NotImplementedError

    def caches(self) -> list:
        """Every cache the model holds now (empty when cache-free)."""
        raise NotImplementedError

    def set_caching(self, on: bool) -> None:
        """Switch the installed caches off (cache-free runs) or on again."""
        raise NotImplementedError

    def describe(self) -> dict:
        """What ``results.json`` records about the model: name, dimensions, dtype."""
        return {"name": self.name, "steps": self.steps}

    # -- shared --------------------------------------------------------------------

    def clear_cross_attention_cache(self) -> None:
        for cache in self.caches():
            cache.clear()

    @contextlib.contextmanager
    def cache_free(self):
        """Run cache-free inside the block; the installed caches stay as they were."""
        self.set_caching(False)
        try:
            yield self
        finally:
            self.set_caching(True)
