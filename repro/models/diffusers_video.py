"""Real transformers from diffusers, tiny and seeded, behind the model seam.

    prompt --fake text encoder--> prompt embeddings (1, text_tokens, text_dim)   [the cache's source]
    noise --denoise loop: the real transformer twice per step
            (positive and negative prompt, classifier-free guidance),
            diffusers' flow-matching Euler scheduler--> latents
    latents --tiny AutoencoderKLWan--> RGB frames (T, H, W, 3) uint8

Architectures (every diffusers transformer here has cross-attention on the prompt):
video ``helios``, ``wan``, ``ltx`` (LTX-Video), ``allegro``, ``sana_video``; image
``pixart`` (PixArt-alpha/sigma) and ``sana``, whose single latent frame the same VAE
decodes. Each takes the same 16-channel latents (LTX-Video packs them into a token
sequence, as its pipeline does). CogVideoX, Mochi and HunyuanVideo attend to the
prompt jointly with the video tokens (no cross-attention module), so the cache has
nothing to attach to there.

The transformer is diffusers' own code; only its size is small (2 layers, 2 heads
of 12, text width 32) and its weights are random with a fixed seed. The cross-attention cache
is attached from outside with
:func:`cache_impl.attach_cross_attention_cache`, exactly as a user would attach one.

Nothing is downloaded: models are built from configs, the text encoder is a seeded
random table per prompt, and ``HF_HUB_OFFLINE`` is set before diffusers is
imported. diffusers is imported here only, when a real model is built.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, replace

import torch

from cache_impl import attach_cross_attention_cache, cross_attention_kv
from repro.models.base import STATS, VideoModel

NEGATIVE_PROMPT = "blurry, static, low quality"
VIDEO_ARCHITECTURES = ("helios", "wan", "ltx", "allegro", "sana_video")
IMAGE_ARCHITECTURES = ("pixart", "sana")
ARCHITECTURES = VIDEO_ARCHITECTURES + IMAGE_ARCHITECTURES
LATENT_CHANNELS = 16  # AutoencoderKLWan's z_dim; its latents_mean and latents_std have 16 entries


@dataclass(frozen=True)
class DiffusersVideoConfig:
    architecture: str = "helios"  # one of ARCHITECTURES
    layers: int = 2
    heads: int = 2
    head_dim: int = 12
    ffn_dim: int = 32
    text_dim: int = 32  # width of the prompt embeddings
    text_tokens: int = 16  # prompt length in tokens
    frames: int = 9  # decoded frames; the VAE packs 4 frames per latent frame after the first (1 for an image)
    height: int = 32  # decoded pixels; 8 per latent pixel
    width: int = 32
    steps: int = 4
    guidance: float = 5.0
    embedding_scale: float = 3.0  # how strongly a prompt's embeddings differ from another's
    # Random weights decode to a dim, low-contrast grey (mean about -0.11, std 0.12 in
    # [-1, 1]); a fixed gain around that mean spreads it over the RGB range, the same
    # for every request, so a different video is visibly different (and SSIM says so).
    display_centre: float = -0.11
    display_gain: float = 4.0
    weight_seed: int = 0
    dtype: torch.dtype = torch.float32

    @property
    def latent_shape(self) -> tuple[int, ...]:
        """The latents the transformer takes: (1, C, T, H, W), or (1, C, H, W) for an image model."""
        if self.architecture in IMAGE_ARCHITECTURES:
            return (1, LATENT_CHANNELS, self.height // 8, self.width // 8)
        return (1, LATENT_CHANNELS, (self.frames - 1) // 4 + 1, self.height // 8, self.width // 8)

    def check(self) -> "DiffusersVideoConfig":
        problems = []
        if self.architecture not in ARCHITECTURES:
            problems.append(f"architecture must be one of {', '.join(ARCHITECTURES)}")
        for name in ("layers", "heads", "head_dim", "ffn_dim", "text_dim", "text_tokens", "steps"):
            if getattr(self, name) < 1:
                problems.append(f"{name} must be >= 1")
        if self.head_dim % 6:
            problems.append("head_dim must be a multiple of 6 (3D rotary embedding)")
        if (self.frames - 1) % 4 or self.height % 16 or self.width % 16:
            problems.append("frames must be 4k+1 and height, width multiples of 16")
        if self.architecture in IMAGE_ARCHITECTURES and self.frames != 1:
            problems.append("an image model has 1 frame")
        if self.dtype not in (torch.float32, torch.bfloat16):
            problems.append("dtype must be float32 or bfloat16")
        if problems:
            raise ValueError("impossible model config: " + "; ".join(problems))
        return self


def build_transformer(cfg: DiffusersVideoConfig) -> torch.nn.Module:
    """The architecture's diffusers transformer at a tiny size, on 16-channel latents."""
    import diffusers

    arch, inner = cfg.architecture, cfg.heads * cfg.head_dim
    if arch in ("helios", "wan"):
        common = dict(patch_size=(1, 2, 2), num_attention_heads=cfg.heads, attention_head_dim=cfg.head_dim,
                      in_channels=LATENT_CHANNELS, out_channels=LATENT_CHANNELS, text_dim=cfg.text_dim,
                      freq_dim=256, ffn_dim=cfg.ffn_dim, num_layers=cfg.layers, cross_attn_norm=True,
                      qk_norm="rms_norm_across_heads")
        if arch == "helios":
            third = cfg.head_dim // 3
            return diffusers.HeliosTransformer3DModel(**common, rope_dim=(third, third, third),
                                                      has_multi_term_memory_patch=False)
        return diffusers.WanTransformer3DModel(**common, rope_max_seq_len=32)
    heads = dict(num_attention_heads=cfg.heads, attention_head_dim=cfg.head_dim, num_layers=cfg.layers,
                 in_channels=LATENT_CHANNELS, out_channels=LATENT_CHANNELS, caption_channels=cfg.text_dim)
    latent_h, latent_w = cfg.height // 8, cfg.width // 8
    if arch == "ltx":
        return diffusers.LTXVideoTransformer3DModel(**heads, cross_attention_dim=inner)
    if arch == "allegro":
        return diffusers.AllegroTransformer3DModel(**heads, cross_attention_dim=inner, sample_height=latent_h,
                                                   sample_width=latent_w, sample_frames=cfg.latent_shape[2])
    if arch == "pixart":
        return diffusers.PixArtTransformer2DModel(**heads, cross_attention_dim=inner, sample_size=latent_h,
                                                  patch_size=2, norm_num_groups=1)
    sana = dict(**heads, num_cross_attention_heads=cfg.heads, cross_attention_head_dim=cfg.head_dim,
                cross_attention_dim=inner, sample_size=latent_h)
    if arch == "sana_video":
        return diffusers.SanaVideoTransformer3DModel(**sana)
    return diffusers.SanaTransformer2DModel(**sana, patch_size=1)


def denoise_call(transformer: torch.nn.Module, cfg: DiffusersVideoConfig, x: torch.Tensor, timestep: torch.Tensor,
                 states: torch.Tensor) -> torch.Tensor:
    """One forward of the transformer as its pipeline calls it: the prediction for
    latents ``x`` (``cfg.latent_shape``), in the same shape."""
    arch = cfg.architecture
    if arch == "ltx":  # a token sequence of latent pixels (patch size 1), and a mask over the prompt
        _, channels, frames, height, width = x.shape
        tokens = x.flatten(2).transpose(1, 2)
        mask = torch.ones(states.shape[:2], device=x.device)
        out = transformer(hidden_states=tokens, encoder_hidden_states=states, timestep=timestep,
                          encoder_attention_mask=mask, num_frames=frames, height=height, width=width,
                          return_dict=False)[0]
        return out.transpose(1, 2).reshape(x.shape)
    extra = {"added_cond_kwargs": {"resolution": None, "aspect_ratio": None}} if arch == "pixart" else {}
    return transformer(hidden_states=x, timestep=timestep, encoder_hidden_states=states, return_dict=False,
                       **extra)[0]


def build_vae() -> torch.nn.Module:
    from diffusers import AutoencoderKLWan
    return AutoencoderKLWan(base_dim=3, z_dim=LATENT_CHANNELS, dim_mult=[1, 1, 1, 1], num_res_blocks=1,
                            temperal_downsample=[False, True, True])


def _cast(model: torch.nn.Module, dtype: torch.dtype) -> torch.nn.Module:
    """Parameters in ``dtype``, but for the modules the model keeps in float32 (as
    ``from_pretrained(torch_dtype=...)`` does). Buffers (rotary frequency tables)
    stay float32: they are inputs to float32 position arithmetic."""
    keep = set(getattr(model, "_keep_in_fp32_modules", None) or [])
    for name, param in model.named_parameters():
        in_fp32 = bool(keep & set(name.split(".")))
        param.data = param.data.to(torch.float32 if in_fp32 else dtype)
    return model


class DiffusersVideo(VideoModel):
    """A diffusers video transformer with CFG, a flow-matching scheduler and a VAE."""

    negative_prompt = NEGATIVE_PROMPT

    def __init__(self, cfg: DiffusersVideoConfig, device: str | torch.device = "cpu"):
        os.environ.setdefault("HF_HUB_OFFLINE", "1")  # never reach for a model hub
        from diffusers import FlowMatchEulerDiscreteScheduler

        self.cfg = cfg.check()
        self.name = cfg.architecture
        self.steps = cfg.steps
        self.device = torch.device(device)
        with torch.random.fork_rng(devices=[]):  # seeded weights; the caller's random state untouched
            torch.manual_seed(cfg.weight_seed)
            self.transformer = _cast(build_transformer(cfg), cfg.dtype).to(self.device).eval()
            self.vae = build_vae().to(self.device).eval()  # float32: decoding is not under test
        self.scheduler_config = FlowMatchEulerDiscreteScheduler(shift=3.0).config
        self._scheduler_cls = FlowMatchEulerDiscreteScheduler
        self.handle = None
        self._counted = dict.fromkeys(STATS, 0)  # stats of caches installed earlier

    # -- caches -------------------------------------------------------------------

    def install_caches(self, factory, max_size: int = 2) -> None:
        if self.handle is not None:
            for key in STATS:
                self._counted[key] += self.handle.stats[key]
            self.handle.detach()
            self.handle = None
        if factory is not None:
            self.handle = attach_cross_attention_cache(self.transformer, factory, max_size=max_size)

    def caches(self) -> list:
        return self.handle.caches() if self.handle is not None else []

    def clear_cross_attention_cache(self) -> None:
        if self.handle is not None:
            self.handle.clear()

    def set_caching(self, on: bool) -> None:
        if self.handle is not None:
            self.handle.enabled = on

    @property
    def stats(self) -> dict:
        now = self.handle.stats if self.handle is not None else dict.fromkeys(STATS, 0)
        return {key: self._counted[key] + now[key] for key in STATS}

    # -- model --------------------------------------------------------------------

    def encode(self, prompt: str) -> dict[str, torch.Tensor]:
        return {"positive": self.embed(prompt), "negative": self.embed(NEGATIVE_PROMPT)}

    def embed(self, prompt: str) -> torch.Tensor:
        """Fake text encoder: embeddings drawn from a generator seeded by the prompt's
        hash, so every prompt has its own and the same prompt always the same."""
        seed = int.from_bytes(hashlib.sha256(prompt.encode()).digest()[:8], "little")
        g = torch.Generator().manual_seed(seed)
        cfg = self.cfg
        # Scaled in place: one allocation, so nothing else takes the freed address first.
        states = torch.randn(1, cfg.text_tokens, cfg.text_dim, generator=g).mul_(cfg.embedding_scale)
        return states.to(self.device, cfg.dtype)

    def compute_kv(self, source: torch.Tensor) -> list[tuple[torch.Tensor, torch.Tensor]]:
        return cross_attention_kv(self.transformer, source)

    def generate(self, sources: dict, seed: int, observe=None) -> torch.Tensor:
        cfg = self.cfg
        g = torch.Generator().manual_seed(seed)
        x = torch.randn(cfg.latent_shape, generator=g).to(self.device, cfg.dtype)
        scheduler = self._scheduler_cls.from_config(self.scheduler_config)
        scheduler.set_timesteps(cfg.steps, device=self.device)
        for step, t in enumerate(scheduler.timesteps):
            timestep = t.expand(1)
            pred = {}
            for role in self.roles:
                self._observe_as(step, role, observe)
                pred[role] = denoise_call(self.transformer, cfg, x, timestep, sources[role])
            guided = pred["negative"] + cfg.guidance * (pred["positive"] - pred["negative"])
            x = scheduler.step(guided, t, x, return_dict=False)[0]
        self._observe_as(None, None, None)
        return x

    def _observe_as(self, step, role, observe) -> None:
        """Route the attached cache's K/V reports, ``(block, k, v)``, to ``observe``
        with this pass's step and role (or stop reporting)."""
        if self.handle is not None:
            self.handle.observe = None if observe is None else (
                lambda block, k, v: observe(step, block, role, k, v))

    def decode(self, latents: torch.Tensor) -> torch.Tensor:
        vae = self.vae
        mean = torch.tensor(vae.config.latents_mean, device=self.device).view(1, -1, 1, 1, 1)
        std = torch.tensor(vae.config.latents_std, device=self.device).view(1, -1, 1, 1, 1)
        if latents.dim() == 4:  # an image: one latent frame
            latents = latents.unsqueeze(2)
        video = vae.decode(latents.float() * std + mean, return_dict=False)[0]  # (1, 3, T, H, W) in [-1, 1]
        video = (video[0] - self.cfg.display_centre) * self.cfg.display_gain
        frames = ((video.clamp(-1, 1) + 1) * 127.5).round().to(torch.uint8)
        return frames.permute(1, 2, 3, 0).contiguous().cpu()

    def describe(self) -> dict:
        cfg = self.cfg
        return {"name": self.name, "class": type(self.transformer).__name__, "steps": cfg.steps,
                "dtype": str(cfg.dtype).removeprefix("torch."), "layers": cfg.layers, "heads": cfg.heads,
                "head_dim": cfg.head_dim, "text_dim": cfg.text_dim, "text_tokens": cfg.text_tokens,
                "latent": list(cfg.latent_shape[1:]), "frames": [cfg.frames, cfg.height, cfg.width],
                "weights": f"random, seed {cfg.weight_seed}"}


def build(architecture: str, device: torch.device, steps: int | None = None,
          dtype: torch.dtype | None = None) -> DiffusersVideo:
    """A tiny ``architecture`` model on ``device``; bfloat16 on CUDA, float32 on CPU unless ``dtype``."""
    one_frame = {"frames": 1} if architecture in IMAGE_ARCHITECTURES else {}
    cfg = DiffusersVideoConfig(architecture=architecture, **one_frame)
    if dtype is None:
        dtype = torch.bfloat16 if torch.device(device).type == "cuda" else torch.float32
    cfg = replace(cfg, dtype=dtype, **({"steps": steps} if steps else {}))
    return DiffusersVideo(cfg, device)
