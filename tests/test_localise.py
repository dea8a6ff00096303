"""Where two runs part (harness.differential.localise): the code under test is written in this file,
and each divergence must name the line where the stale or changed value enters."""

from __future__ import annotations

import functools
import gc
import json
import re
import weakref
from pathlib import Path

import pytest
import torch

from harness.differential.localise import (ARGUMENT, EXACT_BYTES, FLOW, STATE, Trace, first_divergence, record, recording,
                              tensor_digest)

pytestmark = pytest.mark.cpu
HERE = str(Path(__file__).resolve())


def line_of(marker: str) -> int:
    """The line of this file that ends with ``# <marker>``."""
    lines = [i + 1 for i, text in enumerate(Path(HERE).read_text().splitlines()) if text.endswith(f"# {marker}")]
    assert len(lines) == 1, marker
    return lines[0]


# --- code under test: a helper memoised with lru_cache over a tensor ---------------------

WEIGHT = torch.randn(8, 8, generator=torch.Generator().manual_seed(0))


class ByAddress:
    """Hashes a tensor by where it lives, as the buggy caches do (a weak reference
    inside, so the key keeps nothing alive)."""

    def __init__(self, t: torch.Tensor, address_of: torch.Tensor | None = None):
        self.ref = weakref.ref(t)
        like = t if address_of is None else address_of
        self.key = (like.data_ptr(), tuple(like.shape), like.dtype)

    def __hash__(self):
        return hash(self.key)

    def __eq__(self, other):
        return self.key == other.key


@functools.lru_cache(maxsize=4)
def project(key: ByAddress) -> torch.Tensor:
    return torch.tanh(key.ref() @ WEIGHT)


def attend(prompt: torch.Tensor) -> torch.Tensor:
    kv = project(ByAddress(prompt))  # the stale value enters here
    queries = torch.linspace(-1, 1, 32).reshape(4, 8)
    return (queries @ kv.T).softmax(-1) @ kv


@pytest.mark.core_model
def test_a_stale_lru_cache_hit_is_named_at_the_helpers_call_site():
    prompt = torch.randn(4, 8, generator=torch.Generator().manual_seed(1))
    project.cache_clear()
    reference, trace_a = record(attend, prompt)
    # The stale hit, made deterministic: another request's projection cached at this prompt's address.
    project.cache_clear()
    other_request = torch.randn(4, 8, generator=torch.Generator().manual_seed(2))
    project(ByAddress(other_request, address_of=prompt))
    stale, trace_b = record(attend, prompt)
    assert project.cache_info().hits == 1 and not torch.equal(reference, stale), "the stale hit did not happen"

    d = first_divergence(trace_a, trace_b)
    assert d is not None
    assert (d.path, d.line, d.function, d.kind, d.run) == (HERE, line_of("the stale value enters here"),
                                                           "attend", FLOW, "b")
    assert d.op == "entry: local 'kv'" and d.module is None and d.hooks == []
    assert d.other["function"] == "project"  # the reference run computed the projection instead
    assert d.format().startswith(f"{HERE}:{d.line}: a tensor no traced operation computed enters here")


GAIN = torch.tensor(1.5)  # a constant: first read inside positions() on a miss, further down on a hit


@functools.lru_cache(maxsize=2)
def positions(n: int) -> torch.Tensor:  # keyed by value: a hit is the right tensor
    return torch.arange(n, dtype=torch.float32) / n * GAIN


def attend_with_positions(prompt: torch.Tensor) -> torch.Tensor:
    grid = positions(prompt.shape[0])
    kv = project(ByAddress(prompt))  # the stale value enters after a good hit
    return kv * GAIN + grid[:, None]


@pytest.mark.core_model
@pytest.mark.parametrize("stale", [True, False], ids=["stale", "fresh"])
def test_a_cache_hit_with_the_right_value_is_passed_over(stale):
    prompt = torch.randn(4, 8, generator=torch.Generator().manual_seed(1))
    positions.cache_clear(), project.cache_clear()
    reference, trace_a = record(attend_with_positions, prompt)  # misses both caches
    project.cache_clear()
    other_request = torch.randn(4, 8, generator=torch.Generator().manual_seed(2))
    if stale:
        project(ByAddress(other_request, address_of=prompt))
    served, trace_b = record(attend_with_positions, prompt)  # a good hit; then a stale one, or a miss
    assert positions.cache_info().hits == 1 and project.cache_info().hits == int(stale)

    d = first_divergence(trace_a, trace_b)
    if stale:
        assert not torch.equal(reference, served)
        assert (d.line, d.function, d.op) == (line_of("the stale value enters after a good hit"),
                                              "attend_with_positions", "entry: local 'kv'")
    else:
        assert torch.equal(reference, served) and d is None
    assert any(e.kind == "entry" and e.name == "local 'grid'" for e in trace_b.events)  # the good hit was seen


# --- code under test: a module-level memo of the last result ------------------------------

LAST: dict = {}


def denoise(prompt: torch.Tensor) -> torch.Tensor:
    key = tuple(prompt.shape)  # the memo's bug: any prompt of this shape is "the same"
    if key in LAST:
        latents = LAST[key]  # the memo hands back the last result
    else:
        latents = torch.tanh(prompt @ WEIGHT).cumsum(0)
    LAST[key] = latents
    return latents * 2


def denoise_returning_the_memo(prompt: torch.Tensor) -> torch.Tensor:
    if "last" in LAST:
        return LAST["last"]  # the memo is returned as it is
    LAST["last"] = torch.tanh(prompt @ WEIGHT)
    return LAST["last"]


def denoise_reading_the_memo(prompt: torch.Tensor) -> torch.Tensor:
    fresh = torch.tanh(prompt @ WEIGHT)
    mixed = fresh + LAST["last"] if "last" in LAST else fresh  # the memo is read in an expression
    LAST["last"] = fresh
    return mixed


@pytest.mark.core_model
@pytest.mark.parametrize("fn, marker", [(denoise, "the memo hands back the last result"),
                                        (denoise_returning_the_memo, "the memo is returned as it is"),
                                        (denoise_reading_the_memo, "the memo is read in an expression")],
                         ids=["assigned", "returned", "operand"])
def test_a_memo_of_the_last_result_is_named(fn, marker):
    generator = torch.Generator().manual_seed(3)
    earlier, prompt = torch.randn(4, 8, generator=generator), torch.randn(4, 8, generator=generator)
    LAST.clear()
    alone, trace_alone = record(fn, prompt)  # the request served alone
    LAST.clear()
    fn(earlier)  # an earlier request leaves its result in the memo
    after, trace_after = record(fn, prompt)
    assert not torch.equal(alone, after), "the memo did not hand back the earlier result"

    d = first_divergence(trace_alone, trace_after)
    assert (d.path, d.line, d.function, d.kind, d.run) == (HERE, line_of(marker), fn.__name__, FLOW, "b")
    assert d.op.startswith("entry: ")


BY_ID: dict = {}


def project_by_id(prompt: torch.Tensor) -> torch.Tensor:
    pair = BY_ID.get(id(prompt))  # an id()-keyed dict hands back a pair
    if pair is None:
        pair = (torch.tanh(prompt @ WEIGHT), prompt.sum())
        BY_ID[id(prompt)] = pair
    return pair[0] * pair[1]


@pytest.mark.core_model
def test_a_pair_from_an_id_keyed_dict_is_named():
    generator = torch.Generator().manual_seed(7)
    earlier, prompt = torch.randn(4, 8, generator=generator), torch.randn(4, 8, generator=generator)
    BY_ID.clear()
    fresh, trace_a = record(project_by_id, prompt)
    BY_ID.clear()
    BY_ID[id(prompt)] = (torch.tanh(earlier @ WEIGHT), earlier.sum())  # what a freed object's id left behind
    stale, trace_b = record(project_by_id, prompt)
    assert not torch.equal(fresh, stale)
    d = first_divergence(trace_a, trace_b)
    assert (d.line, d.kind, d.op) == (line_of("an id()-keyed dict hands back a pair"), FLOW,
                                      "entry: an item of local 'pair'")


# --- code under test: a module whose forward hook carries state --------------------------

class Block(torch.nn.Module):  # class Block
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(8, 8)

    def forward(self, x):
        return x + torch.nn.functional.gelu(self.proj(x))


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = torch.nn.ModuleList([Block(), Block()])
        self.head = torch.nn.Linear(8, 2)

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return self.head(x)


def stateful_net() -> Net:
    with torch.random.fork_rng():
        torch.manual_seed(0)
        net = Net()
    memory = {}

    def blend(module, inputs, output):  # def blend
        previous = memory.get("previous")  # the hook's state enters
        memory["previous"] = output
        return output if previous is None else (output + previous) / 2

    net.blocks[1].register_forward_hook(blend)
    return net


@pytest.mark.core_model
def test_a_stateful_forward_hook_is_named_with_its_module():
    net = stateful_net()
    generator = torch.Generator().manual_seed(4)
    earlier, x = torch.randn(3, 8, generator=generator), torch.randn(3, 8, generator=generator)
    with torch.no_grad():
        alone, trace_alone = record(net, x)  # the first request: the hook holds nothing yet
        net(earlier)
        after, trace_after = record(net, x)
    assert not torch.equal(alone, after), "the hook's state did not change the output"

    d = first_divergence(trace_alone, trace_after)
    assert (d.path, d.line, d.function, d.kind) == (HERE, line_of("the hook's state enters"), "blend", FLOW)
    assert d.module == {"qualname": "blocks.1", "class": "Block", "source": f"{HERE}:{line_of('class Block')}"}
    assert d.hooks == [f"forward hook on blocks.1: stateful_net.<locals>.blend ({HERE}:{line_of('def blend')})"]
    assert "[module blocks.1: Block" in d.format() and "forward hook on blocks.1" in d.format()
    trace_alone.label, trace_after.label = "alone", "after others"  # how messages name the runs
    named = re.sub(r"run a\b", "run alone", re.sub(r"run b\b", "run after others", d.message))
    assert first_divergence(trace_alone, trace_after).message == named


@pytest.mark.core_model
def test_identical_runs_do_not_part():
    prompt = torch.randn(4, 8, generator=torch.Generator().manual_seed(5))
    project.cache_clear()
    first, trace_a = record(attend, prompt)
    project.cache_clear()
    second, trace_b = record(attend, prompt.clone())  # the same values at another address
    assert torch.equal(first, second)
    assert len(trace_a.events) >= 8  # the projection, the attention, the result: there was something to compare
    assert first_divergence(trace_a, trace_b) is None

    net = Net()
    x = torch.randn(3, 8)
    with torch.no_grad():
        (_, trace_a), (_, trace_b) = record(net, x), record(net, x)
    assert any(e.module >= 0 for e in trace_a.events)
    assert first_divergence(trace_a, trace_b) is None


# --- the other two ways to part -------------------------------------------------------------

SCALE = {"value": 2.0}


def scaled(x: torch.Tensor) -> torch.Tensor:
    y = x * 3
    y.numpy()[0] += SCALE["poison"]  # written outside torch: no operation sees it
    return (y * SCALE["value"]).sum()  # both read here


def sampled(generator: torch.Generator) -> torch.Tensor:
    return torch.randn(4, generator=generator).sum()  # drawn here


@pytest.mark.core_model
def test_arguments_and_state_that_differ_are_named():
    x = torch.ones(3)
    SCALE.update(poison=0.0)
    _, plain = record(scaled, x)
    SCALE.update(poison=1.0)
    _, poisoned = record(scaled, x)
    d = first_divergence(plain, poisoned)
    assert (d.line, d.kind, d.op) == (line_of("both read here"), ARGUMENT, "torch.Tensor.mul")
    assert "changed since outside the traced operations" in d.message

    SCALE.update(poison=0.0, value=5.0)
    _, rescaled = record(scaled, x)
    d = first_divergence(plain, rescaled)
    assert (d.line, d.kind) == (line_of("both read here"), ARGUMENT)
    assert "a Python value, not a tensor (2.0 in run a, 5.0 in run b)" in d.message
    SCALE.update(value=2.0)

    # A generator is digested by its state: another state is another argument.
    _, one = record(sampled, torch.Generator().manual_seed(0))
    _, other = record(sampled, torch.Generator().manual_seed(1))
    d = first_divergence(one, other)
    assert (d.line, d.kind, d.op) == (line_of("drawn here"), ARGUMENT, "torch.randn")


class Noisy(torch.nn.Module):
    """Draws from the global generator: the same arguments, other results."""

    def forward(self, x):
        return x + torch.rand(3)  # state the arguments do not show


@pytest.mark.core_model
def test_the_same_arguments_giving_other_results_is_state():
    x = torch.zeros(3)
    with torch.random.fork_rng():
        torch.manual_seed(0)
        _, a = record(Noisy(), x)
        _, b = record(Noisy(), x)  # the global generator has moved on
    d = first_divergence(a, b)
    assert (d.line, d.kind, d.op) == (line_of("state the arguments do not show"), STATE, "torch.rand")
    assert d.module["qualname"] == "" and d.module["class"] == "Noisy"


# --- digests, memory left unset, the cap, JSON --------------------------------------------

@pytest.mark.core_model
@pytest.mark.parametrize("numel", [64, EXACT_BYTES // 4 + 1000], ids=["small", "large"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_digests_tell_apart_values_that_differ(numel, dtype):
    t = torch.linspace(-3, 3, numel).to(dtype)
    nudged = t.clone()
    nudged.view(torch.int16 if dtype == torch.bfloat16 else torch.int32)[numel // 3] += 1  # the next value up
    assert not torch.equal(t, nudged)
    assert tensor_digest(t) != tensor_digest(nudged)
    strided = torch.stack([t, t])[:, :].t()[:, 0]  # the same values, not contiguous, elsewhere
    assert tensor_digest(strided) == tensor_digest(t)


@pytest.mark.core_model
def test_tensors_without_plain_memory_are_digested_without_failing():
    assert ":opaque" in tensor_digest(torch.empty(3, device="meta"))
    assert ":opaque" in tensor_digest(torch.ones(3).to_sparse())
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # nested tensors are a prototype
        nested = torch.nested.nested_tensor([torch.ones(2), torch.ones(3)])
    assert tensor_digest(nested).startswith("float32(?):opaque")


def rotate(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    out[0::2] = -x[1::2]
    out[1::2] = x[0::2]
    return out + 1


@pytest.mark.core_model
def test_memory_left_unset_is_not_compared_until_read():
    _, trace = record(rotate, torch.arange(6.0))
    ops = [e for e in trace.events if e.kind == "op"]
    empty, writes, read = ops[0], [e for e in ops if e.name == "torch.Tensor.__setitem__"], ops[-1]
    assert empty.name == "torch.empty_like" and empty.outputs == ("float32(6):unset",)
    assert len(writes) == 2 and all(e.inputs[0] == "float32(6):unset" for e in writes)
    assert read.name == "torch.Tensor.add" and read.inputs[0] == tensor_digest(torch.tensor([-1., 0, -3, 2, -5, 4]))


def build_and_apply(x: torch.Tensor) -> torch.Tensor:
    torch.manual_seed(0)
    return torch.nn.Linear(4, 3)(x)  # its weight: torch.empty wrapped in a Parameter, then initialised


@pytest.mark.core_model
def test_a_parameter_built_on_unset_memory_is_unset_until_read():
    # The module's constructor wraps torch.empty in a Parameter (another tensor object on the same
    # storage) and fills it in place: what was in that memory before must not be compared.
    _, trace = record(build_and_apply, torch.ones(4))
    init = [e for e in trace.events if e.kind == "op" and e.name == "torch.nn.init.kaiming_uniform_"]
    assert init and init[0].inputs[0].endswith(":unset")
    applied = [e for e in trace.events if e.kind == "op" and e.name == "torch.nn.functional.linear"]
    assert applied and not applied[0].inputs[1].endswith(":unset")  # read into new memory: by value


def chain(last: str) -> torch.Tensor:
    return getattr(torch.ones(3).add(1).mul(2).sub(1).div(2).exp(), last)()


@pytest.mark.core_model
def test_the_cap_bounds_the_trace():
    traces = []
    for last in ("log", "neg"):
        with recording(max_ops=5) as trace:
            chain(last)
        traces.append(trace)
    a, b = traces
    assert len(a.events) == len(b.events) == 5 and a.truncated and b.truncated
    assert first_divergence(a, b) is None  # they agree as far as the cap lets us see
    a, b = [record(chain, last)[1] for last in ("log", "neg")]
    assert first_divergence(a, b).op == "torch.Tensor.neg"  # beyond it they part
    with pytest.raises(ValueError, match="max_ops"):
        with recording(max_ops=0):
            pass


@pytest.mark.core_model
def test_traces_round_trip_through_json():
    net = stateful_net()
    x = torch.randn(3, 8, generator=torch.Generator().manual_seed(6))
    with torch.no_grad():
        _, a = record(net, x)
        _, b = record(net, x)
    copies = [Trace.from_json(json.loads(json.dumps(t.to_json()))) for t in (a, b)]
    assert [c.to_json() for c in copies] == [a.to_json(), b.to_json()]
    d = first_divergence(a, b)
    assert d is not None and first_divergence(*copies).to_json() == d.to_json()
    assert json.loads(json.dumps(d.to_json())) == d.to_json()
    for bad in ({}, {"format": 1}, {**a.to_json(), "events": [["op", "x", 99, -1, [], [], []]]}):
        with pytest.raises(ValueError, match="trace"):
            Trace.from_json(bad)


# --- a real library: diffusers' First Block Cache served back to back --------------------------

@pytest.mark.diffusion
def test_a_diffusers_cache_hook_that_carries_state_is_named():
    from diffusers.hooks import FirstBlockCacheConfig, apply_first_block_cache
    from diffusers.hooks.hooks import HookRegistry

    from repro.models.diffusers_video import DiffusersVideoConfig, build_transformer

    cfg = DiffusersVideoConfig(architecture="wan", layers=3)
    with torch.random.fork_rng():
        torch.manual_seed(0)
        transformer = build_transformer(cfg).eval()
    apply_first_block_cache(transformer, FirstBlockCacheConfig(threshold=0.9))
    generator = torch.Generator().manual_seed(1)
    requests = [(torch.randn(cfg.latent_shape, generator=generator), torch.randn(1, 16, 32, generator=generator))
                for _ in range(2)]

    def serve(latents, prompt):
        with torch.no_grad(), transformer.cache_context("cond"):
            return transformer(hidden_states=latents, timestep=torch.tensor([500]), encoder_hidden_states=prompt,
                               return_dict=False)[0]

    alone, trace_alone = record(serve, *requests[1])
    serve(*requests[0])  # served before it, with no reset in between
    after, trace_after = record(serve, *requests[1])
    assert not torch.equal(alone, after), "the hook's state did not change the output"
    d = first_divergence(trace_alone, trace_after)
    assert d.path.endswith("diffusers/hooks/first_block_cache.py") and d.function == "_should_compute_remaining_blocks"
    assert d.module["qualname"] == "blocks.0" and d.module["class"] == "WanTransformerBlock"
    assert any("diffusers hook 'fbc_leader_block_hook' on blocks.0: FBCHeadBlockHook" in h for h in d.hooks)
    print(d.format())

    HookRegistry.check_if_exists_or_initialize(transformer).reset_stateful_hooks()  # the documented reset
    reset, trace_reset = record(serve, *requests[1])
    assert torch.equal(alone, reset) and first_divergence(trace_alone, trace_reset) is None


@pytest.mark.diffusion
def test_a_diffusers_cache_keyed_by_address_is_named():
    """diffusers' TextKVCache keys its text K/V by the prompt's data_ptr(): a new prompt
    on the address of an earlier one gets the earlier one's K/V."""
    import warnings

    from diffusers import NucleusMoEImageTransformer2DModel
    from diffusers.hooks import TextKVCacheConfig, apply_text_kv_cache
    from diffusers.hooks.hooks import HookRegistry

    from repro.allocator import AddressArena

    with torch.random.fork_rng(), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zero-sized expert weights: moe_enabled=False leaves them empty
        torch.manual_seed(0)
        transformer = NucleusMoEImageTransformer2DModel(
            patch_size=2, in_channels=16, num_layers=2, attention_head_dim=16, num_attention_heads=2,
            joint_attention_dim=32, axes_dims_rope=(4, 6, 6), moe_enabled=False, num_experts=4,
            moe_intermediate_dim=16).eval()
    apply_text_kv_cache(transformer, TextKVCacheConfig())
    generator = torch.Generator().manual_seed(1)
    latents = torch.randn(1, 16, 16, generator=generator)
    earlier, prompt = torch.randn(1, 8, 32, generator=generator), torch.randn(1, 8, 32, generator=generator)
    arena = AddressArena(prompt.shape)  # fresh tensors, one address: what the allocator does to freed prompts

    def serve(embeddings):
        with torch.no_grad():
            return transformer(hidden_states=latents, img_shapes=[(1, 4, 4)], encoder_hidden_states=embeddings,
                               timestep=torch.tensor([500.0]), return_dict=False)[0]

    def reset():
        HookRegistry.check_if_exists_or_initialize(transformer).reset_stateful_hooks()

    source = arena.fresh(prompt)
    alone, trace_alone = record(serve, source)
    del source
    reset()
    source = arena.fresh(earlier)
    serve(source)
    del source
    source = arena.fresh(prompt)  # the earlier prompt's address, its K/V still cached
    stale, trace_stale = record(serve, source)
    assert not torch.equal(alone, stale), "the address-keyed cache did not hand back the earlier K/V"

    d = first_divergence(trace_alone, trace_stale)
    assert d.path.endswith("diffusers/hooks/text_kv_cache.py") and d.function == "new_forward"
    assert d.op == "entry: local 'txt_key'" and d.kind == FLOW
    assert d.module["qualname"] == "transformer_blocks.0"
    assert any("diffusers hook 'text_kv_cache_block' on transformer_blocks.0" in h for h in d.hooks)
    print(d.format())

    reset()  # control: the earlier prompt elsewhere, so a miss: the same output, no divergence
    kept = earlier.clone()
    serve(kept)
    again, trace_again = record(serve, prompt.clone())
    assert torch.equal(alone, again) and first_divergence(trace_alone, trace_again) is None


# --- two processes: each records its own run, a third compares ----------------------------

OUTSIDE = '''
import functools, weakref, torch

class ByAddress:
    def __init__(self, t, address_of=None):
        self.ref, like = weakref.ref(t), (t if address_of is None else address_of)
        self.key = (like.data_ptr(), tuple(like.shape))
    def __hash__(self):
        return hash(self.key)
    def __eq__(self, other):
        return self.key == other.key

@functools.lru_cache(maxsize=4)
def project(key):
    return torch.tanh(key.ref() @ torch.linspace(-1, 1, 64).reshape(8, 8))

def serve(prompt):
    kv = project(ByAddress(prompt))  # stale here
    return kv.softmax(-1)
'''

CHILD = '''
import json, sys, torch
from harness.differential.localise import record
import outside
prompt = torch.randn(4, 8, generator=torch.Generator().manual_seed(0))
if sys.argv[2] == "stale":
    other = torch.randn(4, 8, generator=torch.Generator().manual_seed(1))
    outside.project(outside.ByAddress(other, address_of=prompt))
_, trace = record(outside.serve, prompt)
open(sys.argv[1], "w").write(json.dumps(trace.to_json()))
'''


def test_traces_recorded_in_other_processes_compare(tmp_path):
    import os
    import subprocess
    import sys

    (tmp_path / "outside.py").write_text(OUTSIDE)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(Path(HERE).parent.parent)])}
    traces = []
    for run in ("fresh", "stale"):
        out = tmp_path / f"{run}.json"
        subprocess.run([sys.executable, "-c", CHILD, str(out), run], env=env, check=True, timeout=120)
        traces.append(Trace.from_json(json.loads(out.read_text())))
    fresh, stale = (t.events[-1] for t in traces)
    assert fresh.kind == stale.kind == "result" and fresh.inputs != stale.inputs, "the stale hit did not happen"
    d = first_divergence(*traces)
    line = next(i + 1 for i, text in enumerate(OUTSIDE.splitlines()) if text.endswith("# stale here"))
    assert (d.path, d.line, d.function, d.op) == (str(tmp_path / "outside.py"), line, "serve", "entry: local 'kv'")


def _on_collection(phase, info):
    # A gc callback of the kind a library installs (hypothesis times collections): Python code, and here
    # a tensor operation, that run whenever the collector does.
    torch.zeros(1) + 1


@pytest.mark.core_model
def test_what_runs_inside_a_garbage_collection_is_not_the_flow():
    def serve(collect):
        x = torch.ones(3) * 2
        if collect:
            gc.collect()  # the collector runs here in one run and not in the other, as allocation counts say
        return x + 1

    gc.callbacks.append(_on_collection)
    try:
        (a, trace_a), (b, trace_b) = record(serve, True), record(serve, False)
    finally:
        gc.callbacks.remove(_on_collection)
    assert torch.equal(a, b) and first_divergence(trace_a, trace_b) is None
