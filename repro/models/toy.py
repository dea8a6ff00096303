"""A toy Helios: the real cross-attention cache structure, small enough for a CPU.

    prompt --fake text encoder--> encoder states (one token per latent position,
        carrying that position's code and the prompt's scene there)
    encoder states --text projection--> projected states   [text stage cache, keyed by encoder states]
    projected states --per block K/V--> (K, V) per block    [kv stage caches, keyed by projected states]
    noise --denoise loop (flow matching Euler, CFG positive/negative)--> latents
    latents --decoder--> RGB frames (T, H, W, 3) uint8

Cross-attention routes each latent position to the text token with the same
position code (queries and keys come from position codes) and reads the scene
value there, so the video plays exactly the scene the K/V came from. A request
served with another request's K/V plays the other prompt's scene.

Caching is on only without grad, as in the real model. ``ToyHelios`` is a
:class:`repro.models.base.VideoModel`, like the real architectures.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Callable

import torch
import torch.nn.functional as F

from repro.models.base import STATS, VideoModel

COLOURS = {
    "red": (1.0, -1.0, -1.0), "green": (-1.0, 1.0, -1.0), "blue": (-1.0, -1.0, 1.0),
    "yellow": (1.0, 1.0, -1.0), "magenta": (1.0, -1.0, 1.0), "cyan": (-1.0, 1.0, 1.0),
    "white": (1.0, 1.0, 1.0),
}
SHAPES = ("circle", "square")
DIRECTIONS = {"right": (0, 1), "left": (0, -1), "down": (1, 0), "up": (-1, 0)}
PROMPT_PATTERN = re.compile(r"^\s*(\w+)\s+(\w+)\s+moving\s+(\w+)\s*$")
NEGATIVE_PROMPT = "static gray background"
DEFAULT_PROMPTS = ("red circle moving right", "blue square moving down",
                   "green circle moving left", "yellow square moving up")


@dataclass(frozen=True)
class PipelineConfig:
    frames: int = 8  # latent frames T
    height: int = 10  # latent height
    width: int = 10  # latent width
    text_dim: int = 64  # encoder state width
    heads: int = 2
    head_dim: int = 64
    blocks: int = 2
    steps: int = 6  # denoise steps
    guidance: float = 1.5  # classifier-free guidance scale
    upscale: int = 8  # decoder: latent pixel -> upscale x upscale RGB pixels
    sharpness: float = 30.0  # attention scale: how strictly a position picks its own token
    dtype: torch.dtype = torch.float32

    @property
    def tokens(self) -> int:  # text tokens = latent positions
        return self.frames * self.height * self.width

    @property
    def model_dim(self) -> int:
        return self.heads * self.head_dim

    @property
    def code_dim(self) -> int:  # width of a position code
        return min(self.head_dim, self.text_dim - 3)

    def check(self) -> "PipelineConfig":
        problems = []
        for name in ("frames", "height", "width", "heads", "head_dim", "blocks", "steps", "upscale"):
            if getattr(self, name) < 1:
                problems.append(f"{name} must be >= 1")
        if self.text_dim < 8:
            problems.append("text_dim must be >= 8")
        if self.text_dim > self.model_dim:
            problems.append("text_dim must not exceed heads * head_dim")
        if problems:
            raise ValueError("impossible pipeline config: " + "; ".join(problems))
        return self


PRESETS = {
    # A request in well under a second on one CPU core.
    "tiny": PipelineConfig(),
    # The real Helios text side: 512 text tokens of width 4096, 40 blocks of
    # 40 heads x 128. For GPU boxes, to measure what the cache saves at scale.
    "helios": PipelineConfig(frames=8, height=8, width=8, text_dim=4096, heads=40, head_dim=128,
                             blocks=40, steps=4, dtype=torch.bfloat16),
}


def parse_prompt(prompt: str) -> tuple[tuple[float, float, float], str, tuple[int, int]]:
    """'red circle moving right' -> (colour, shape, direction). Clear error otherwise."""
    m = PROMPT_PATTERN.match(prompt)
    if not m or m[1] not in COLOURS or m[2] not in SHAPES or m[3] not in DIRECTIONS:
        raise ValueError(f"cannot draw prompt {prompt!r}: expected 'COLOUR SHAPE moving DIRECTION' with "
                         f"COLOUR in {'/'.join(COLOURS)}, SHAPE in {'/'.join(SHAPES)}, "
                         f"DIRECTION in {'/'.join(DIRECTIONS)}")
    return COLOURS[m[1]], m[2], DIRECTIONS[m[3]]


def render_scene(prompt: str, cfg: PipelineConfig) -> torch.Tensor:
    """The clip a prompt describes, at latent resolution: (T, H, W, 3) in [-1, 1]."""
    T, H, W = cfg.frames, cfg.height, cfg.width
    if prompt == NEGATIVE_PROMPT:
        return torch.zeros(T, H, W, 3)
    colour, shape, (dy, dx) = parse_prompt(prompt)
    ys, xs = torch.meshgrid(torch.arange(H, dtype=torch.float32), torch.arange(W, dtype=torch.float32),
                            indexing="ij")
    # A dark background that brightens along the direction of motion, tinted by
    # the colour: the whole frame, not just the shape, says which prompt it is.
    along = (dy * (ys / max(H - 1, 1) - 0.5) + dx * (xs / max(W - 1, 1) - 0.5)).unsqueeze(-1)
    scene = (-0.55 + 0.45 * along + 0.15 * torch.tensor(colour)).expand(T, H, W, 3).clone()
    radius = max(1.0, min(H, W) / 4)
    for t in range(T):
        frac = t / max(T - 1, 1)
        # travel from one side to the other along the direction, centred across it
        cy = (H - 1) / 2 + dy * (frac - 0.5) * (H - 1 - 2 * radius)
        cx = (W - 1) / 2 + dx * (frac - 0.5) * (W - 1 - 2 * radius)
        if shape == "circle":
            # Coverage by distance from the centre, soft over one latent pixel: at this
            # resolution a hard-edged disc is a rounded square once upsampled.
            cover = (radius + 0.5 - ((ys - cy) ** 2 + (xs - cx) ** 2).sqrt()).clamp(0, 1)
        else:
            cover = (((ys - cy).abs() <= radius * 0.9) & ((xs - cx).abs() <= radius * 0.9)).float()
        cover = cover.unsqueeze(-1)
        scene[t] = scene[t] * (1 - cover) + torch.tensor(colour) * cover
    return scene


def _orthonormal_rows(rows: int, cols: int, g: torch.Generator) -> torch.Tensor:
    """A (rows, cols) matrix with orthonormal rows (rows <= cols)."""
    q, _ = torch.linalg.qr(torch.randn(cols, rows, generator=g))
    return q.T.contiguous()


class ToyHelios(VideoModel):
    """The toy video DiT. Weights are fixed by ``weight_seed``; caches are pluggable.

    ``install_caches(factory)`` puts one cache at the text stage (text
    projection, keyed by the encoder states) and one per block at the kv stage
    (K/V, keyed by the projected states); ``None`` runs cache-free.
    ``clear_cross_attention_cache()`` clears them all.
    """

    name = "toy"
    negative_prompt = NEGATIVE_PROMPT

    def __init__(self, cfg: PipelineConfig, device: str | torch.device = "cpu", weight_seed: int = 0):
        self.cfg = cfg.check()
        self.steps = cfg.steps
        self.device = torch.device(device)
        g = torch.Generator().manual_seed(weight_seed)
        c, P, D = cfg.text_dim, cfg.code_dim, cfg.model_dim
        # Position codes: near-orthogonal unit vectors, one per latent position.
        self.codes = F.normalize(torch.randn(cfg.tokens, P, generator=g), dim=-1)
        # Encoder states are [code, scene RGB, 0...] rotated by R, so they look dense.
        self.rotation = _orthonormal_rows(c, c, g)
        # Text projection Q (c -> D) with orthonormal rows; E = R Q maps a
        # [code, RGB] row to projected space, and E^T maps it back.
        w_text = _orthonormal_rows(c, D, g)
        embed_t = (self.rotation @ w_text).T  # (D, c)
        to_code, to_rgb = embed_t[:, :P], embed_t[:, P:P + 3]
        self.w_text = w_text
        self.w_k, self.w_v, self.w_q, self.w_o = [], [], [], []
        for _ in range(cfg.blocks):
            b = [_orthonormal_rows(P, cfg.head_dim, g) for _ in range(cfg.heads)]  # code -> head
            u = [_orthonormal_rows(3, cfg.head_dim, g) for _ in range(cfg.heads)]  # RGB -> head
            self.w_k.append(to_code @ torch.cat(b, dim=1))
            self.w_v.append(to_rgb @ torch.cat(u, dim=1))
            self.w_q.append(self.codes @ torch.cat(b, dim=1))  # queries: each position's own code
            self.w_o.append(torch.cat(u, dim=1).T / cfg.heads)  # average the heads back to RGB
        for name in ("codes", "rotation", "w_text"):
            setattr(self, name, getattr(self, name).to(self.device, cfg.dtype))
        self.code_states = self.codes @ self.rotation[:P]  # every prompt's position part of the states
        for name in ("w_k", "w_v", "w_q", "w_o"):
            setattr(self, name, [w.to(self.device, cfg.dtype) for w in getattr(self, name)])
        self.text_cache = None
        self.kv_caches: list = []
        self.caching = True
        self.stats = dict.fromkeys(STATS, 0)

    # -- caches -----------------------------------------------------------------

    def install_caches(self, factory: Callable | None, max_size: int = 2) -> None:
        """Fresh caches from ``factory(max_size=...)``; ``None`` for a cache-free model."""
        self.text_cache = factory(max_size=max_size) if factory else None
        self.kv_caches = [factory(max_size=max_size) for _ in range(self.cfg.blocks)] if factory else []

    def caches(self) -> list:
        return [c for c in [self.text_cache, *self.kv_caches] if c is not None]

    def set_caching(self, on: bool) -> None:
        self.caching = on

    def describe(self) -> dict:
        cfg = self.cfg
        return {"name": self.name, "steps": cfg.steps, "dtype": str(cfg.dtype).removeprefix("torch."),
                "blocks": cfg.blocks, "heads": cfg.heads, "head_dim": cfg.head_dim, "text_dim": cfg.text_dim,
                "text_tokens": cfg.tokens, "latent": [cfg.frames, cfg.height, cfg.width]}

    def _cached(self, cache, source: torch.Tensor, compute: Callable, stage: str):
        """``stage``: "text" or "kv", the stats this lookup counts in."""
        if cache is None or not self.caching or torch.is_grad_enabled():
            return compute()
        value = cache.get(source)
        if value is not None:
            self.stats[f"{stage}_hits"] += 1
            return value
        self.stats[f"{stage}_misses"] += 1
        value = compute()
        cache.put(source, value)
        return value

    # -- model ------------------------------------------------------------------

    def encode(self, prompt: str) -> dict[str, torch.Tensor]:
        return {"positive": self.encode_prompt(prompt), "negative": self.encode_prompt(NEGATIVE_PROMPT)}

    def encode_prompt(self, prompt: str) -> torch.Tensor:
        """Fake text encoder: (1, tokens, text_dim) encoder states for a prompt,
        ``[code, scene RGB, 0...] @ rotation``. The states are the only tensor of their
        size it allocates, as a real encoder's output is the last thing it makes:
        nothing else takes the address the previous request freed."""
        cfg = self.cfg
        P = cfg.code_dim
        scene = render_scene(prompt, cfg).reshape(cfg.tokens, 3).to(self.device, cfg.dtype)
        return torch.addmm(self.code_states, scene, self.rotation[P:P + 3]).unsqueeze(0)

    def project_text(self, states: torch.Tensor) -> torch.Tensor:
        return self._cached(self.text_cache, states, lambda: states @ self.w_text, "text")

    def block_kv(self, block: int, projected: torch.Tensor):
        cache = self.kv_caches[block] if self.kv_caches else None
        return self._cached(cache, projected,
                            lambda: (projected @ self.w_k[block], projected @ self.w_v[block]), "kv")

    def compute_kv(self, states: torch.Tensor) -> list:
        """The request's own K/V per block, computed cache-free (ground truth)."""
        projected = states @ self.w_text
        return [(projected @ self.w_k[b], projected @ self.w_v[b]) for b in range(self.cfg.blocks)]

    def predict(self, x: torch.Tensor, states: torch.Tensor, step: int, role: str, observe=None):
        """Predicted clean latent (tokens, 3) given the noisy latent and one prompt's states."""
        cfg = self.cfg
        projected = self.project_text(states)
        out = torch.zeros_like(x)
        for b in range(cfg.blocks):
            k, v = self.block_kv(b, projected)
            if observe is not None:
                observe(step, b, role, k, v)
            q = self.w_q[b].view(1, cfg.tokens, cfg.heads, cfg.head_dim).transpose(1, 2)
            kh = k.view(1, -1, cfg.heads, cfg.head_dim).transpose(1, 2)
            vh = v.view(1, -1, cfg.heads, cfg.head_dim).transpose(1, 2)
            attn = F.scaled_dot_product_attention(q, kh, vh, scale=cfg.sharpness)
            out = out + attn.transpose(1, 2).reshape(cfg.tokens, cfg.model_dim) @ self.w_o[b]
        # A little of the noisy latent leaks through, so the seed shows in the output.
        return out / cfg.blocks + 0.05 * torch.tanh(x)

    def generate(self, sources: dict, seed: int, observe=None) -> torch.Tensor:
        """Denoise from seeded noise with CFG (``sources["positive"]``,
        ``sources["negative"]``); returns latents (T, H, W, 3)."""
        cfg = self.cfg
        g = torch.Generator().manual_seed(seed)
        x = torch.randn(cfg.tokens, 3, generator=g).to(self.device, cfg.dtype)
        times = torch.linspace(0.0, 1.0, cfg.steps + 1).tolist()
        for i in range(cfg.steps):
            t, t_next = times[i], times[i + 1]
            pos = self.predict(x, sources["positive"], i, "positive", observe)
            neg = self.predict(x, sources["negative"], i, "negative", observe)
            x1 = neg + cfg.guidance * (pos - neg)
            x = x + (t_next - t) * (x1 - x) / (1.0 - t)  # flow-matching Euler step
        return x.view(cfg.frames, cfg.height, cfg.width, 3)

    def decode(self, latents: torch.Tensor) -> torch.Tensor:
        """Latents (T, H, W, 3) in [-1, 1] -> RGB frames (T, H*s, W*s, 3) uint8 on CPU."""
        x = latents.float().permute(0, 3, 1, 2)
        x = F.interpolate(x, scale_factor=self.cfg.upscale, mode="bilinear", align_corners=False)
        x = ((x.clamp(-1, 1) + 1) * 127.5).round().to(torch.uint8)
        return x.permute(0, 2, 3, 1).contiguous().cpu()


def preset(name: str, **overrides) -> PipelineConfig:
    if name not in PRESETS:
        raise ValueError(f"unknown preset {name!r}: choose from {', '.join(PRESETS)}")
    return replace(PRESETS[name], **overrides).check()
