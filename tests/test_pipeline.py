"""The toy model and the back-to-back serving loop (CPU)."""

from __future__ import annotations

import pytest
import torch

from cache_impl import resolve
from repro.models.toy import DEFAULT_PROMPTS, PRESETS, ToyHelios, parse_prompt, preset, render_scene
from repro.serving import STRATEGIES, serve

pytestmark = [pytest.mark.core_model, pytest.mark.cpu]  # and diffusion where the model runs


@pytest.fixture(scope="module")
def model():
    return ToyHelios(preset("tiny"))


def _run(model, prompt, seed):
    with torch.no_grad():
        return model.generate(model.encode(prompt), seed)


@pytest.mark.parametrize("bad", ["purple circle moving right", "red blob moving up", "red circle moving sideways",
                                 "red circle", ""])
def test_bad_prompt_is_a_clear_error(bad):
    with pytest.raises(ValueError, match="cannot draw prompt"):
        parse_prompt(bad)


def test_impossible_config_and_unknown_preset():
    with pytest.raises(ValueError, match="impossible pipeline config"):
        preset("tiny", steps=0)
    with pytest.raises(ValueError, match="unknown preset"):
        preset("huge")


def test_helios_preset_carries_the_real_text_side_dimensions():
    cfg = PRESETS["helios"]
    assert (cfg.tokens, cfg.text_dim, cfg.heads, cfg.head_dim, cfg.blocks) == (512, 4096, 40, 128, 40)


@pytest.mark.diffusion
def test_output_plays_the_prompt(model):
    """Decoded frames follow the prompt's scene: the model is a faithful toy."""
    for prompt in DEFAULT_PROMPTS:
        latents = _run(model, prompt, 0)
        scene = render_scene(prompt, model.cfg) * model.cfg.guidance  # CFG against a zero negative
        assert (latents.clamp(-1, 1) - scene.clamp(-1, 1)).abs().mean() < 0.1, prompt


@pytest.mark.diffusion
def test_deterministic_given_seed(model):
    assert torch.equal(_run(model, DEFAULT_PROMPTS[0], 3), _run(model, DEFAULT_PROMPTS[0], 3))
    assert not torch.equal(_run(model, DEFAULT_PROMPTS[0], 3), _run(model, DEFAULT_PROMPTS[0], 4))


@pytest.mark.diffusion
def test_frames_shape_and_type(model):
    frames = model.decode(_run(model, DEFAULT_PROMPTS[1], 0))
    cfg = model.cfg
    assert frames.shape == (cfg.frames, cfg.height * cfg.upscale, cfg.width * cfg.upscale, 3)
    assert frames.dtype == torch.uint8


@pytest.mark.diffusion
def test_cache_hits_within_a_request_and_changes_nothing(model):
    reference = _run(model, DEFAULT_PROMPTS[0], 1)
    model.install_caches(resolve("hardened"))
    try:
        before = dict(model.stats)
        cached = _run(model, DEFAULT_PROMPTS[0], 1)
        hits = model.stats["kv_hits"] - before["kv_hits"]
        misses = model.stats["kv_misses"] - before["kv_misses"]
        # K/V computed once per block and role (positive, negative), then reused at every later step.
        assert misses == 2 * model.cfg.blocks
        assert hits == 2 * model.cfg.blocks * (model.cfg.steps - 1)
        assert torch.equal(cached, reference)
        model.clear_cross_attention_cache()
        assert all(len(c) == 0 for c in model.caches())
    finally:
        model.install_caches(None)


@pytest.mark.diffusion
def test_no_caching_with_grad_enabled(model):
    model.install_caches(resolve("hardened"))
    try:
        before = dict(model.stats)
        with torch.enable_grad():
            states = model.encode_prompt(DEFAULT_PROMPTS[0])
            model.predict(torch.zeros(model.cfg.tokens, 3), states, 0, "positive")
        assert model.stats == before and all(len(c) == 0 for c in model.caches())
    finally:
        model.install_caches(None)


@pytest.mark.diffusion
@pytest.mark.parametrize("name", ["freed_address_reused", "storage_swapped", "persistent_buffer",
                                  "persistent_buffer_inference"])
def test_forced_strategies_really_reuse_the_address(model, name):
    model.install_caches(None)
    served = list(serve(model, STRATEGIES[name](model), [(DEFAULT_PROMPTS[0], 0), (DEFAULT_PROMPTS[1], 1)]))
    assert served[0].reused_from["positive"] is None
    assert served[1].addresses["positive"] == served[0].addresses["positive"]
    assert served[1].reused_from["positive"] == "request 0 (positive)"


@pytest.mark.diffusion
def test_serve_releases_sources(model):
    """After a request, nothing the loop owns keeps its encoder states alive."""
    import weakref
    refs = []

    def grab(index, sources):
        refs.extend(weakref.ref(s) for s in sources.values())

    model.install_caches(resolve("hardened"))
    try:
        list(serve(model, STRATEGIES["natural_reuse"](model), [(DEFAULT_PROMPTS[0], 0)], on_request_start=grab))
        assert refs and all(r() is None for r in refs)
    finally:
        model.install_caches(None)




@pytest.mark.diffusion
def test_the_next_prompt_is_encoded_right_after_the_last_request_is_released(model, monkeypatch):
    """As a one-worker server allocates: when the next prompt is encoded, every tensor of
    the previous request is already freed, so its address is the allocator's to hand back."""
    import weakref
    issued, alive_at_encode = [], []
    encode = model.encode

    def watched_encode(prompt):
        alive_at_encode.append(sum(ref() is not None for ref in issued))
        sources = encode(prompt)
        issued.extend(weakref.ref(t) for t in sources.values())
        return sources

    monkeypatch.setattr(model, "encode", watched_encode)
    model.install_caches(resolve("fingerprint"))
    try:
        served = []
        for req in serve(model, STRATEGIES["natural_reuse"](model), [(p, i) for i, p in enumerate(DEFAULT_PROMPTS)]):
            issued.extend(weakref.ref(t) for t in (req.latents, req.frames))
            served.append(req)
    finally:
        model.install_caches(None)
    assert alive_at_encode == [0] * len(DEFAULT_PROMPTS)
    assert all(r.latents is None and r.frames is None for r in served)
