"""Tiny diffusers transformers served back to back as an engine serves them, with
one of diffusers' hook configurations enabled: the pipelines ``harness hunt``
checks, each a plain function ``fn(prompt, seed)`` for ``differential --call``.

``--call repro.models.hunt_models:MODEL/HOOK/MODE`` names one: MODEL a key of
:data:`MODELS`, HOOK a name from ``diffusers.hooks`` (a config class or an
``apply_*`` function), MODE ``no-reset`` (requests back to back, as an engine that
keeps the transformer calls it) or ``reset`` (``transformer._reset_stateful_cache()``
before each request, as diffusers' pipelines do). The transformer is built when the
function is looked up, from a tiny seeded config with random weights, on the CPU;
nothing is downloaded.

Each model and each hook is written as source text (:data:`MODELS`,
:data:`RECIPES`), run here and copied as it is into the standalone reproduction
script of a finding, so the script and the check run the same code.
"""

from __future__ import annotations

import functools
import os

import torch

# diffusers imports bitsandbytes where it is installed, and bitsandbytes looks for CPU kernels on a
# model hub at import: never reach for one
os.environ.setdefault("HF_HUB_OFFLINE", "1")

# Per model: the source that builds it ("transformer = ..."), then one denoising
# step ("out = ..." from latents x, text states text, timestep t).
MODELS = {
    "wan": {
        "build": ("from diffusers import WanTransformer3DModel\n"
                  "transformer = WanTransformer3DModel(patch_size=(1, 2, 2), num_attention_heads=2, "
                  "attention_head_dim=8, in_channels=4, out_channels=4, text_dim=32, freq_dim=16, ffn_dim=32, "
                  "num_layers=3, rope_max_seq_len=32)\n"
                  "LATENTS = (1, 4, 2, 8, 8)"),
        "step": "out = transformer(hidden_states=x, timestep=t.expand(1), encoder_hidden_states=text, "
                "return_dict=False)[0]",
    },
    "nucleusmoe": {
        "build": ("from diffusers import NucleusMoEImageTransformer2DModel\n"
                  "transformer = NucleusMoEImageTransformer2DModel(patch_size=2, in_channels=16, num_layers=3, "
                  "attention_head_dim=8, num_attention_heads=2, joint_attention_dim=32, axes_dims_rope=(2, 2, 4), "
                  "moe_enabled=False, out_channels=4)\n"
                  "LATENTS = (1, 16, 16)"),
        "step": "out = transformer(hidden_states=x, img_shapes=[(1, 4, 4)], encoder_hidden_states=text, "
                "timestep=t.expand(1), return_dict=False)[0]",
    },
}
# Text states as an engine's text encoder hands them over: 2048 tokens x 32, 256 KiB
# (a real one is larger still), so each request's are a fresh allocation of their own.
TEXT = (1, 2048, 32)
TIMESTEPS = (999.0, 800.0, 600.0, 400.0, 200.0)

# Per hook: how it is enabled ("..." uses transformer, and CURRENT["t"], the
# timestep now being denoised). A hook with no recipe is reported, not skipped.
RECIPES = {
    "FasterCacheConfig": "transformer.enable_cache(FasterCacheConfig(spatial_attention_block_skip_range=2, "
                         "spatial_attention_timestep_skip_range=(-1, 700), current_timestep_callback=lambda: "
                         "CURRENT['t'], attention_weight_callback=lambda _: 0.5, is_guidance_distilled=True))",
    "FirstBlockCacheConfig": "transformer.enable_cache(FirstBlockCacheConfig(threshold=0.5))",
    "MagCacheConfig": "transformer.enable_cache(MagCacheConfig(threshold=0.5, num_inference_steps=5, "
                      "retention_ratio=0.0, mag_ratios=[1.0] * 5))",
    "PyramidAttentionBroadcastConfig": "transformer.enable_cache(PyramidAttentionBroadcastConfig("
                                       "spatial_attention_block_skip_range=2, spatial_attention_timestep_skip_range="
                                       "(-1, 1001), current_timestep_callback=lambda: CURRENT['t']))",
    "SeaCacheConfig": "transformer.enable_cache(SeaCacheConfig(threshold=0.5))",
    "TaylorSeerCacheConfig": "transformer.enable_cache(TaylorSeerCacheConfig(cache_interval=2, "
                             "disable_cache_before_step=1))",
    "TextKVCacheConfig": "transformer.enable_cache(TextKVCacheConfig())",
    "LayerSkipConfig": "apply_layer_skip(transformer, LayerSkipConfig(indices=[1], fqn='auto'))",
    "apply_group_offloading": "apply_group_offloading(transformer, onload_device='cpu', offload_device='cpu', "
                              "offload_type='block_level', num_blocks_per_group=1)",
    "apply_layerwise_casting": "apply_layerwise_casting(transformer, storage_dtype=torch.bfloat16, "
                               "compute_dtype=torch.float32)",
}
# Hooks that cannot be enabled on one CPU process, and why.
NOT_APPLICABLE = {
    "apply_context_parallel": "needs a torch.distributed process group over several devices",
    "apply_tensor_parallel": "needs a torch.distributed process group over several devices",
    "SmoothedEnergyGuidanceConfig": "a guider's setting (SmoothedEnergyGuidance applies it inside guidance), "
                                    "not a hook a transformer serves with",
    "apply_layerwise_casting_hook": "the per-layer step of apply_layerwise_casting, which is checked",
}
MODES = ("no-reset", "reset")


def hook_names() -> list[str]:
    """Every configuration diffusers ships in diffusers.hooks: its ``...Config`` classes
    and the ``apply_*`` functions that no config stands for."""
    import diffusers.hooks as hooks

    names = [n for n in dir(hooks) if n.endswith("Config") and isinstance(getattr(hooks, n), type)]
    with_config = {getattr(hooks, n).__module__ for n in names}  # a config and its apply_* share a module
    names += [n for n in dir(hooks) if n.startswith("apply_") and callable(getattr(hooks, n))
              and getattr(hooks, n).__module__ not in with_config]
    return sorted(names)


def build_source(model: str, hook: str) -> str:
    """The source that builds the model with the hook enabled (defines ``transformer``)."""
    return (f"import torch\nfrom diffusers.hooks import *  # noqa: F403 - the hook's config and apply_*\n"
            f"CURRENT = {{'t': 0.0}}\ntorch.manual_seed(0)\n{MODELS[model]['build']}\n"
            f"transformer.eval()\n{RECIPES[hook]}\n")


def build(model: str, hook: str) -> dict:
    """Run :func:`build_source`; returns its namespace (``transformer``, ``CURRENT``, ...)."""
    namespace: dict = {}
    exec(compile(build_source(model, hook), f"<{model} with {hook}>", "exec"), namespace)  # noqa: S102
    return namespace


def generate(namespace: dict, model: str, prompt: str, seed: int, reset: bool) -> torch.Tensor:
    """One request: text states from the prompt, noise from the seed, the denoising loop."""
    transformer = namespace["transformer"]
    if reset:
        transformer._reset_stateful_cache()
    text = torch.randn(TEXT, generator=torch.Generator().manual_seed(sum(map(ord, prompt))))
    x = torch.randn(namespace["LATENTS"], generator=torch.Generator().manual_seed(seed))
    step = compile(MODELS[model]["step"], "<step>", "exec")
    with torch.no_grad():
        for i, t in enumerate(TIMESTEPS):
            namespace["CURRENT"]["t"] = t
            local = {"transformer": transformer, "x": x, "text": text, "t": torch.tensor(t)}
            with transformer.cache_context("cond"):
                exec(step, namespace, local)  # noqa: S102
            x = x - 0.2 * local["out"]
    return x


@functools.lru_cache(maxsize=None)
def _built(model: str, hook: str) -> dict:
    return build(model, hook)


def as_in_script(text: str, model: str, hook: str) -> str:
    """``text`` (a place the check named) with its path to the engine's transformer written as the
    standalone script names it: ``transformer.blocks[0]...``."""
    return text.replace(f"{__name__}.{_built.__name__}({model!r}, {hook!r})['transformer']", "transformer")


def serve(prompt: str, seed: int, *, model: str, hook: str, mode: str) -> torch.Tensor:
    """One request of the engine that keeps ``model`` with ``hook`` enabled."""
    return generate(_built(model, hook), model, prompt, seed, reset=mode == "reset")


def __getattr__(name: str):
    """``MODEL/HOOK/MODE`` -> that pipeline's ``fn(prompt, seed)``."""
    parts = name.split("/")
    if len(parts) != 3 or parts[0] not in MODELS or parts[1] not in RECIPES or parts[2] not in MODES:
        raise AttributeError(name)
    # Built here, when the function is looked up, not in its first request: a process that
    # serves one request alone forks after the look-up, and a request's trace holds no build.
    _built(parts[0], parts[1])
    return functools.partial(serve, model=parts[0], hook=parts[1], mode=parts[2])
