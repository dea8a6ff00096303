"""Code a user could have written, each job ``fn(prompt, seed)`` carrying state, or not, from one
call to the next in its own way: what ``harness.differential.carried`` must name, or must not."""

import functools

import torch

WEIGHT = torch.linspace(-1, 1, 16).reshape(4, 4)


class Settings:
    def __init__(self):
        self.layers = "all"


SETTINGS = Settings()  # written once by the script, handed to every job


def _resolve_layers(settings, depth):
    if settings.layers == "all":  # read: rewritten_settings
        settings.layers = list(range(depth))  # left: rewritten_settings (the next job sees a list)
    return settings.layers


def rewritten_settings(prompt, seed):
    """Like a library that resolves a shorthand into the settings object it was given."""
    depth = len(prompt.split())
    layers = _resolve_layers(SETTINGS, depth)
    x = torch.full((4,), float(seed + 1))
    for _ in layers:
        x = torch.tanh(WEIGHT @ x)
    return x


class Manager:
    _instance = None

    def __init__(self):
        self.by_position = {}
        self.calls = 0

    @classmethod
    def get(cls):
        if cls._instance is None:
            cls._instance = cls()
        return cls._instance


def settings_by_position(prompt, seed):
    """Like a process-wide manager that keeps a per-parameter setting under the parameter's position."""
    manager = Manager.get()
    manager.calls += 1  # state the result does not depend on
    if prompt.startswith("scaled"):
        manager.by_position[0] = 2.0  # left: settings_by_position
    scale = manager.by_position.get(0, 1.0)  # read: settings_by_position
    return torch.full((4,), float(seed + 1)) * scale


_LOG = []
_SEEN = {}


def memo_beside_noise(prompt, seed):
    """A memo of the first job's projection, beside a log and a counter the result never reads."""
    _LOG.append(prompt)
    _SEEN["count"] = _SEEN.get("count", 0) + 1
    if "first" not in _SEEN:  # read: memo_beside_noise
        _SEEN["first"] = WEIGHT @ torch.full((4,), float(len(prompt)))  # left: memo_beside_noise
    return _SEEN["first"] + seed


def _closure():
    kept = []

    def job(prompt, seed):
        if not kept:
            kept.append(float(len(prompt)))
        return torch.full((4,), kept[0] + seed)
    return job


in_a_closure = _closure()


def independent(prompt, seed):
    _LOG.append(prompt)  # left behind, read by no job
    return torch.full((4,), float(len(prompt) + seed))


RUNNING = torch.zeros(4)  # a running mean of what the jobs saw


def running_mean(prompt, seed):
    """A statistic kept in a module-level tensor, updated in place by every job."""
    x = torch.full((4,), float(len(prompt) + seed))
    RUNNING.mul_(0.5).add_(x, alpha=0.5)  # left: running_mean, read: running_mean (the old mean, updated)
    return x - RUNNING


SCORER = torch.nn.Linear(4, 1)  # a model the script builds once
with torch.no_grad():
    SCORER.weight.fill_(0.25)
    SCORER.bias.zero_()


def online_scorer(prompt, seed):
    """A model held in a module global, trained a step by every job that scores."""
    x = torch.full((1, 4), float(len(prompt) + seed))
    score = SCORER(x)  # read: online_scorer (through torch's Linear.forward)
    if prompt.startswith("learn"):
        score.sum().backward()
        with torch.no_grad():
            SCORER.weight.sub_(0.01 * SCORER.weight.grad)  # left: online_scorer
        SCORER.zero_grad(set_to_none=True)
    return score.detach()


_TURNS = []


def turn_counter(prompt, seed):
    """A conversation's turns kept in a module-level list: the result depends on its length."""
    _TURNS.append(prompt)  # left: turn_counter, read: turn_counter (its length, then appended to)
    return torch.full((4,), float(len(_TURNS) + seed))


class Precision:
    dtype = torch.float32


PRECISION = Precision()


def _apply(settings, overrides):
    for name, value in overrides.items():
        setattr(settings, name, value)


def precision_switch(prompt, seed):
    """A job that asks for double precision sets it through a helper that names no attribute,
    and every later job computes in it."""
    if prompt.startswith("precise"):
        _apply(PRECISION, {"dtype": torch.float64})  # left: precision_switch
    x = torch.linspace(0.1, 0.9, 4, dtype=PRECISION.dtype)  # read: precision_switch
    return (x.exp() * (seed + 1)).to(torch.float32)  # rounded once in double, twice in single


_PROFILE = {}
_FIRST = {}


class _Knobs:
    def __init__(self):
        self.inner = {}


_KNOBS = _Knobs()


def two_settings_among_noise(prompt, seed):
    """Two settings the first job leaves, both read later, beside a profile of many entries
    nothing reads."""
    for layer in range(150):
        _PROFILE[f"{prompt}/layer{layer}"] = layer
    if prompt.startswith("first"):
        _FIRST["flag"] = 1.0  # left: two_settings_among_noise
        _KNOBS.inner["knob"] = 2.0
    return torch.full((4,), float(seed)) + _FIRST.get("flag", 0.0) + _KNOBS.inner.get("knob", 0.0)  # read: two_settings_among_noise


class _Memory:
    def __init__(self):
        self.by_context = {}


class _Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(4, 4)
        self.memory = _Memory()  # what a cache hook keeps on the block it is applied to


class _Stage(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = torch.nn.ModuleList([_Block(), _Block()])


class _Engine(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.stages = torch.nn.ModuleList([_Stage(), _Stage()])


@functools.cache
def _engine(name):
    torch.manual_seed(0)  # the same weights in every process
    return _Engine()


def engine_in_a_cache(prompt, seed):
    """An engine's model loaded on first use and kept in a functools cache; a block deep in it keeps
    its first input per context, as a cache hook does, and nothing resets it between requests."""
    block = _engine("small").stages[1].blocks[1]
    x = torch.full((4,), float(len(prompt) + seed))
    if "cond" not in block.memory.by_context:  # read: engine_in_a_cache
        block.memory.by_context["cond"] = x  # left: engine_in_a_cache
    with torch.no_grad():
        return block.proj(block.memory.by_context["cond"])


class _Engines:
    @staticmethod
    @functools.cache
    def load(name):  # the same engine, kept in a cache reached through a class
        torch.manual_seed(0)
        return _Engine()


def engine_in_a_class_cache(prompt, seed):
    """As engine_in_a_cache, the engine kept by a cached static method of a class."""
    block = _Engines.load("small").stages[0].blocks[1]
    x = torch.full((4,), float(len(prompt) + seed))
    if "cond" not in block.memory.by_context:  # read: engine_in_a_class_cache
        block.memory.by_context["cond"] = x  # left: engine_in_a_class_cache
    with torch.no_grad():
        return block.proj(block.memory.by_context["cond"])
