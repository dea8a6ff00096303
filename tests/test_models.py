"""The model seam and the real diffusers architectures (tiny, seeded, on CPU):
the cross-attention cache attached from outside changes nothing bitwise, hits,
detaches without a trace, reproduces the seed's bug with the pre-fix design and
agrees with the tensor-level audit design by design."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
import torch

from cache_impl import DESIGNS, attach_cross_attention_cache, resolve
from harness.report.results import CLEAN, CONTAMINATED, INCONCLUSIVE, load
from harness.run import References, case_requests, run_case
from repro.models import ModelSpecError, VideoModel, load_model
from repro.models.toy import DEFAULT_PROMPTS
from repro.scenarios import FALSE_HIT, PASS, get_scenario, run_scenario

pytestmark = [pytest.mark.diffusion, pytest.mark.cpu]

REAL = ["helios", "wan"]
# The other real architectures: each hands its cross-attention a new view of the
# projected prompt at every step (``x.view(...)`` after the projection).
NEW_VIEW_EACH_STEP = ["ltx", "allegro", "sana_video", "pixart", "sana"]
CPU = torch.device("cpu")
FORCED = ["freed_address_reused", "storage_swapped", "persistent_buffer", "persistent_buffer_inference"]

def repro_main(argv=None):
    """``python -m harness repro ARGS`` in this process."""
    from harness.__main__ import main
    return main(["repro", *(argv or [])])



@pytest.fixture(scope="module")
def models():
    return {name: load_model(name, CPU, steps=3) for name in REAL}


def _generate(model, prompt=DEFAULT_PROMPTS[0], seed=0, observe=None, sources=None):
    with torch.no_grad():
        return model.generate(sources or model.encode(prompt), seed, observe)


@pytest.mark.core_model
@pytest.mark.parametrize("name", REAL)
@pytest.mark.parametrize("cache_name", list(DESIGNS))
def test_attached_cache_is_bitwise_invisible_and_hits(models, name, cache_name):
    model = models[name]
    model.install_caches(None)
    reference = _generate(model)
    model.install_caches(resolve(cache_name))
    sources = model.encode(DEFAULT_PROMPTS[0])
    seen = []
    try:
        before = dict(model.stats)
        cached = _generate(model, sources=sources)
        _generate(model, sources=sources, observe=lambda step, block, role, k, v: seen.append((block, role, k, v)))
        stats = {k: model.stats[k] - before[k] for k in before}
    finally:
        model.install_caches(None)
    assert torch.equal(cached, reference)
    own = {role: model.compute_kv(src) for role, src in sources.items()}
    assert len(seen) == len(model.roles) * model.cfg.layers * model.steps
    assert all(torch.equal(k, own[role][b][0]) and torch.equal(v, own[role][b][1]) for b, role, k, v in seen)
    # Two runs on one request's sources: the projections are computed at the first
    # step of the first run only (per role), then skipped.
    blocks, steps, roles = model.cfg.layers, model.steps, len(model.roles)
    assert stats["text_misses"] == roles and stats["kv_misses"] == roles * blocks
    assert stats["kv_hits"] == roles * blocks * (2 * steps - 1)
    assert stats["text_hits"] == roles * (2 * steps - 1)


def _model_state(module: torch.nn.Module) -> tuple:
    forwards = sorted(name for name, m in module.named_modules() if "forward" in vars(m))
    return forwards, {k: v.clone() for k, v in module.state_dict().items()}


@pytest.mark.core_model
@pytest.mark.parametrize("name", REAL)
def test_detach_restores_the_model_exactly(models, name):
    transformer = models[name].transformer
    forwards, state = _model_state(transformer)
    handle = attach_cross_attention_cache(transformer, resolve("hardened"))
    assert len(handle.attention) == models[name].cfg.layers
    wrapped = [n for n, m in transformer.named_modules() if "forward" in vars(m)]
    assert len(wrapped) == 1 + 2 * models[name].cfg.layers  # text projection, to_k and to_v per block
    handle.detach()
    after_forwards, after_state = _model_state(transformer)
    assert after_forwards == forwards == []
    assert after_state.keys() == state.keys() and all(torch.equal(after_state[k], state[k]) for k in state)
    assert all(len(c) == 0 for c in handle.caches())


@pytest.mark.parametrize("name", NEW_VIEW_EACH_STEP)
def test_every_architecture_attaches_unhinted_and_the_l2_design_hits_as_fingerprint(name):
    """Attached with no hint, every design is bitwise invisible, uses the model's own
    K/V and detaches exactly. The only lookups that miss under ``fingerprint`` are
    the compulsory ones (each role's first, per cache); ``hardened`` and
    ``request_scoped`` miss exactly those too. ``weakref`` and ``torch_weak_id``
    follow the view object, which dies at the end of each step: no K/V hit at all."""
    model = load_model(name, CPU, steps=2)
    forwards, state = _model_state(model.transformer)
    reference = _generate(model)
    sources = model.encode(DEFAULT_PROMPTS[0])
    own = {role: model.compute_kv(src) for role, src in sources.items()}
    stats = {}
    for design in DESIGNS:
        model.install_caches(resolve(design))
        seen = []
        try:
            out = _generate(model, sources=sources, observe=lambda step, b, role, k, v: seen.append((b, role, k, v)))
            stats[design] = dict(model.handle.stats)
            text_modules = len(model.handle.text_modules)
        finally:
            model.install_caches(None)
        assert torch.equal(out, reference), design
        assert len(seen) == len(model.roles) * model.cfg.layers * model.steps
        assert all(torch.equal(k, own[role][b][0]) and torch.equal(v, own[role][b][1]) for b, role, k, v in seen)
    after_forwards, after_state = _model_state(model.transformer)
    assert after_forwards == forwards == []
    assert all(torch.equal(after_state[k], state[k]) for k in state)
    roles, blocks, steps = len(model.roles), model.cfg.layers, model.steps
    assert text_modules >= 1
    text = roles * text_modules
    assert stats["fingerprint"] == {"text_misses": text, "text_hits": text * (steps - 1),
                                    "kv_misses": roles * blocks, "kv_hits": roles * blocks * (steps - 1)}
    assert stats["hardened"] == stats["request_scoped"] == stats["fingerprint"]
    assert stats["weakref"]["kv_hits"] == stats["torch_weak_id"]["kv_hits"] == 0


def test_architecture_samples_count_each_designs_lookups():
    """LTX-Video hands its cross-attention a new view each step: hardened hits as
    fingerprint does, weakref loses every K/V hit; the hit rate is hits over lookups."""
    from harness.bench import architecture_samples
    arch = architecture_samples(models=("ltx",), designs=("fingerprint", "weakref", "hardened"), repeats=1, steps=2)
    row = arch["ltx"]["designs"]
    assert row["hardened"]["lookups"] == row["fingerprint"]["lookups"] == 2 * 2 * (1 + 2)  # 2 steps, 2 roles
    assert row["hardened"]["hit_rate"] == row["fingerprint"]["hit_rate"] == 0.5
    assert row["weakref"]["kv_hits"] == 0 and row["weakref"]["text_hits"] == 2
    assert arch["ltx"]["class"] == "LTXVideoTransformer3DModel"


@pytest.mark.core_model
def test_attach_fails_in_one_line_naming_what_it_saw():
    from diffusers import CogVideoXTransformer3DModel  # joint attention: the prompt is in the token sequence
    with torch.device("meta"):
        joint = CogVideoXTransformer3DModel(num_layers=1, num_attention_heads=2, attention_head_dim=8)
    with pytest.raises(ValueError, match=r"no cross-attention module .* seen: transformer_blocks.0.attn1") as info:
        attach_cross_attention_cache(joint, resolve("hardened"))
    assert "\n" not in str(info.value)
    model = load_model("ltx", CPU, steps=1)
    with pytest.raises(ValueError, match=r"no module 'condition_embedder.text_embedder' .*: caption_projection\)"):
        attach_cross_attention_cache(model.transformer, resolve("hardened"),
                                     text_projection="condition_embedder.text_embedder")
    assert not [n for n, m in model.transformer.named_modules() if "forward" in vars(m)]


@pytest.mark.core_model
def test_attach_refuses_a_model_without_cross_attention_and_a_second_attach(models):
    with pytest.raises(ValueError, match="no cross-attention module"):
        attach_cross_attention_cache(torch.nn.Linear(4, 4), resolve("weakref"), text_projection=None)
    handle = attach_cross_attention_cache(models["wan"].transformer, resolve("weakref"))
    try:
        with pytest.raises(ValueError, match="attached twice"):
            attach_cross_attention_cache(models["wan"].transformer, resolve("weakref"))
    finally:
        handle.detach()
    assert not [n for n, m in models["wan"].transformer.named_modules() if "forward" in vars(m)]


@pytest.mark.core_model
def test_fused_to_kv_projection_is_cached_too():
    model = load_model("wan", CPU, steps=2)
    for attn in model.transformer.modules():
        if getattr(attn, "is_cross_attention", False):
            attn.fuse_projections()
    reference = _generate(model)
    model.install_caches(resolve("weakref"))
    cached = _generate(model)
    assert torch.equal(cached, reference)
    assert model.stats["kv_hits"] == 2 * model.cfg.layers * (model.steps - 1)
    model.install_caches(None)
    assert not [n for n, m in model.transformer.named_modules() if "forward" in vars(m)]


@pytest.mark.core_model
def test_no_caching_with_grad_enabled(models):
    model = models["helios"]
    model.install_caches(resolve("hardened"))
    try:
        before = dict(model.stats)
        with torch.enable_grad():
            model.generate(model.encode(DEFAULT_PROMPTS[0]), 0)
        assert model.stats == before and all(len(c) == 0 for c in model.caches())
    finally:
        model.install_caches(None)


@pytest.mark.core_model
def test_prompts_are_distinct_and_deterministic(models):
    model = models["helios"]
    a, b = (model.encode(p)["positive"] for p in DEFAULT_PROMPTS[:2])
    assert not torch.equal(a, b) and torch.equal(a, model.encode(DEFAULT_PROMPTS[0])["positive"])
    frames = model.decode(_generate(model))
    cfg = model.cfg
    assert frames.shape == (cfg.frames, cfg.height, cfg.width, 3) and frames.dtype == torch.uint8


@pytest.mark.core_model
@pytest.mark.parametrize("name", REAL)
def test_bfloat16_cache_is_bitwise_invisible(name):
    model = load_model(name, CPU, steps=2, dtype=torch.bfloat16)
    reference = _generate(model)
    model.install_caches(resolve("weakref"))
    assert reference.dtype == torch.bfloat16 and torch.equal(_generate(model), reference)
    assert model.stats["kv_hits"] > 0


@pytest.mark.core_model
@pytest.mark.parametrize("name", REAL)
def test_forced_reuse_matches_the_tensor_level_audit(models, name):
    """Per forced scenario and design: the pipeline verdict of every request after the
    first is contaminated exactly when the tensor-level scenario of the same name
    finds a false hit in that design."""
    model = models[name]
    reference = References(model)
    requests = case_requests(DEFAULT_PROMPTS, 0, 2)
    for scenario in FORCED:
        for design in DESIGNS:
            audit = run_scenario(get_scenario(scenario), resolve(design)).status
            assert audit in (PASS, FALSE_HIT), (scenario, design, audit)
            records = run_case(model, resolve(design), scenario, design, 0, requests, reference, CPU)
            assert records[0].verdict == INCONCLUSIVE
            later = records[1:]
            assert all(r.address_reused and r.model == name for r in later)
            if audit == FALSE_HIT:
                assert all(r.verdict == CONTAMINATED and not r.kv_equal for r in later), (scenario, design)
                assert max(r.ssim_min for r in later) < 0.8, (scenario, design)  # visibly another video
            else:
                assert all(r.verdict == CLEAN and r.latents_equal and r.ssim_min == 1.0
                           for r in later), (scenario, design)
    model.install_caches(None)


@pytest.mark.parametrize("name", NEW_VIEW_EACH_STEP)
def test_forced_reuse_on_every_architecture(name):
    """The seed's bug through each new architecture's serving loop: a freed prompt's
    address handed to the next request contaminates the pre-fix cache and not
    hardened, whose later requests are bitwise equal to cache-free."""
    model = load_model(name, CPU, steps=2)
    reference = References(model)
    requests = case_requests(DEFAULT_PROMPTS, 0, 2)
    outcome = {design: run_case(model, resolve(design), "freed_address_reused", design, 0, requests, reference, CPU)[1]
               for design in ("fingerprint", "hardened")}
    model.install_caches(None)
    assert all(r.address_reused for r in outcome.values())
    assert outcome["fingerprint"].verdict == CONTAMINATED and not outcome["fingerprint"].kv_equal
    assert outcome["hardened"].verdict == CLEAN and outcome["hardened"].latents_equal


def test_repro_cli_on_helios_and_wan(capsys, tmp_path):
    """The issue's acceptance run: fingerprint contaminated, weakref and hardened clean
    under forced reuse, with GIFs of the real models' decoded frames."""
    main = repro_main
    code = main(["--model", "helios", "wan", "--cache", "fingerprint", "weakref", "hardened", "--scenario",
                 "freed_address_reused", "--seed", "0", "--requests", "2", "--steps", "2", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 0, out[-2000:]
    results = load(tmp_path)
    assert set(results.models) == {"helios", "wan"}
    assert results.models["helios"]["class"] == "HeliosTransformer3DModel"
    assert results.models["wan"]["class"] == "WanTransformer3DModel"
    for name in REAL:
        second = {r.cache: r for r in results.records if r.model == name and r.request == 1}
        assert second["fingerprint"].verdict == CONTAMINATED and second["fingerprint"].ssim_min < 0.8
        assert second["weakref"].verdict == CLEAN and second["hardened"].verdict == CLEAN
        gif = tmp_path / "videos" / f"{name}-freed_address_reused-seed0-r1-fingerprint-vs-weakref.gif"
        assert gif.stat().st_size > 0


OUTSIDE_MODEL = '''
"""A model written outside the repository: learned queries cross-attend to the prompt."""
import torch
from cache_impl import attach_cross_attention_cache
from repro.models import VideoModel


class CrossAttention(torch.nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.to_k = torch.nn.Linear(dim, dim)
        self.to_v = torch.nn.Linear(dim, dim)
        self.is_cross_attention = True


class Net(torch.nn.Module):
    def __init__(self, dim=8, blocks=2):
        super().__init__()
        self.query = torch.nn.Parameter(torch.randn(16, dim))
        self.attn = torch.nn.ModuleList(CrossAttention(dim) for _ in range(blocks))

    def forward(self, x, text):
        for a in self.attn:
            k, v = a.to_k(text), a.to_v(text)
            x = x + torch.softmax(self.query @ k.transpose(-1, -2), dim=-1) @ v
        return x


class Model(VideoModel):
    name = "outside"

    def __init__(self, device, steps):
        torch.manual_seed(0)
        self.net, self.device, self.steps, self.handle = Net().to(device), device, steps or 3, None

    def encode(self, prompt):
        g = torch.Generator().manual_seed(sum(map(ord, prompt)))
        return {role: torch.randn(1, 4, 8, generator=g).to(self.device) for role in self.roles}

    def generate(self, sources, seed, observe=None):
        x = torch.randn(1, 16, 8, generator=torch.Generator().manual_seed(seed)).to(self.device)
        for step in range(self.steps):
            for role in self.roles:
                if self.handle:
                    self.handle.observe = (lambda b, k, v, s=step, r=role: observe(s, b, r, k, v)) if observe else None
                x = self.net(x, sources[role])
        return x

    def decode(self, latents):
        frame = (latents[0].sigmoid() * 255).round().to(torch.uint8).cpu()
        return frame.unsqueeze(-1).expand(16, 8, 3).reshape(1, 16, 8, 3).repeat(2, 1, 1, 1).contiguous()

    def compute_kv(self, source):
        return self.handle.compute_kv(source)

    def install_caches(self, factory, max_size=2):
        if self.handle:
            self.handle.detach()
        self.handle = attach_cross_attention_cache(self.net, factory, max_size, text_projection=None) \\
            if factory else None

    def caches(self):
        return self.handle.caches() if self.handle else []

    def set_caching(self, on):
        if self.handle:
            self.handle.enabled = on

    @property
    def stats(self):
        return dict(self.handle.stats) if self.handle else {"text_hits": 0, "text_misses": 0, "kv_hits": 0,
                                                            "kv_misses": 0}


def factory(device, steps=None, dtype=None):
    return Model(device, steps)
'''


def test_a_model_written_outside_the_repo_runs_through_the_seam(tmp_path, monkeypatch, capsys):
    """The seam, through the command line in this process with the user's package on the path
    (``python -m harness repro`` as a process of its own: the piped run in tests/test_repro_matrix.py)."""
    main = repro_main
    package = tmp_path / "mypkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "models.py").write_text(textwrap.dedent(OUTSIDE_MODEL))
    for name in ("mypkg", "mypkg.models"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    monkeypatch.syspath_prepend(str(tmp_path))
    out = tmp_path / "run"
    code = main(["--model", "mypkg.models:factory", "--cache", "fingerprint", "weakref", "--scenario",
                 "freed_address_reused", "--seed", "0", "--requests", "2", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 0, err[-2000:]
    assert "diffusers" not in err
    results = load(out)
    second = {r.cache: r for r in results.records if r.request == 1}
    assert {r.model for r in results.records} == {"outside"}
    assert second["fingerprint"].verdict == CONTAMINATED and second["weakref"].verdict == CLEAN


# One fresh Python for two checks, in this order: first the toy with the harness's run, command
# line and report imported, then the real models with the network off. Both need a process of
# their own (nothing imported before), and starting one is most of each check's cost.
FRESH_PROCESS = '''
import socket, sys
def refuse(*args, **kwargs):
    raise OSError("network is off in this test")
socket.socket.connect = socket.socket.connect_ex = refuse
socket.create_connection = refuse
import torch
from repro.models import load_model
import harness.run, harness.cli, harness.report.render
load_model("toy", torch.device("cpu"))
print("the toy imported diffusers:", "diffusers" in sys.modules, flush=True)
from cache_impl import resolve
for name in ("helios", "wan"):
    model = load_model(name, torch.device("cpu"), steps=2)
    model.install_caches(resolve("weakref"))
    with torch.no_grad():
        frames = model.decode(model.generate(model.encode("red circle moving right"), 0))
    assert frames.dtype == torch.uint8 and model.stats["kv_hits"] > 0
print("built and ran offline", "diffusers" in sys.modules)
'''


@pytest.fixture(scope="module")
def fresh_process(tmp_path_factory):
    home = tmp_path_factory.mktemp("home")  # no cache of downloaded models there
    script = home / "fresh.py"
    script.write_text(FRESH_PROCESS)
    return subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300,
                          env={"PYTHONPATH": ":".join(sys.path), "PATH": "/usr/bin:/bin", "HOME": str(home)})


@pytest.mark.core_model
def test_real_models_build_and_run_with_the_network_off(fresh_process):
    assert fresh_process.returncode == 0, fresh_process.stderr[-3000:]
    assert "built and ran offline True" in fresh_process.stdout


@pytest.mark.core_model
def test_the_toy_never_imports_diffusers(fresh_process):
    assert "the toy imported diffusers: False\n" in fresh_process.stdout, fresh_process.stderr[-3000:]


@pytest.mark.core_model
@pytest.mark.parametrize("spec, message", [("nope", "unknown model"), ("no_such_pkg.x:f", "cannot import"),
                                           ("repro.models:nothing_here", "no callable"),
                                           ("repro.models.toy:render_scene", "failed"),
                                           ("collections:OrderedDict", "not a VideoModel")])
def test_bad_model_specs(spec, message):
    with pytest.raises(ModelSpecError, match=message):
        load_model(spec, CPU)


@pytest.mark.core_model
def test_the_toy_is_a_video_model():
    model = load_model("toy", CPU)
    assert isinstance(model, VideoModel) and model.roles == ("positive", "negative")
