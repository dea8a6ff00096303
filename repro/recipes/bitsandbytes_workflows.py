"""bitsandbytes' optimizers driven as a sweep drives them: each job builds its own model from
the seed, sets per-parameter options through the process-wide ``GlobalOptimManager`` the way its
docs show (``override_config``; ``StableEmbedding`` does it for itself), takes a few optimizer
steps and returns its weights; jobs run one after the other in one process, as in a sweep or a
notebook."""

import os
import weakref

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # bitsandbytes may look for CPU kernels on a model hub: never reach for one

import bitsandbytes as bnb
import torch
from torch import nn

from repro.recipes import as_calls, drives, place

LIBRARY = "bitsandbytes"
SCAN = ("optim",)  # bitsandbytes' parts the hunt scans for places
# Each recipe reads what it needs from a prompt: "freeze" (the first layer's lr set to 0), "text"
# (a model that starts with an embedding; otherwise one that starts with a linear layer).
PROMPTS = ("freeze the first layer", "text model", "train all", "train all again")


def _model(seed: int) -> nn.Module:
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(8, 8), nn.Tanh(), nn.Linear(8, 1))


def _weights(model: nn.Module) -> torch.Tensor:
    return torch.cat([p.detach().flatten() for p in model.parameters()])


def forget_dead_parameters() -> None:
    """The fix bitsandbytes can make: ``override_config`` drops a parameter's settings when the
    parameter dies, so that its id() names nothing once it is gone (patched in here)."""
    manager = bnb.optim.GlobalOptimManager
    override = manager.override_config

    def override_config(self, parameters, *args, **kwargs):
        listed = [parameters] if isinstance(parameters, torch.Tensor) else list(parameters)
        for p in listed:
            if id(p) not in self.pid2config:
                weakref.finalize(p, self.pid2config.pop, id(p), None)
        return override(self, listed, *args, **kwargs)
    manager.override_config = override_config


@drives(place(LIBRARY, "optim/optimizer.py", "if id(p) in self.pid2config:\nself.index2config[(group_index, p_index)]"),
        place(LIBRARY, "optim/optimizer.py", "self.mng.pid2config[id(p)] = config"), fix=forget_dead_parameters)
def frozen_layer_trials(prompt: str, seed: int, reset: bool = False) -> torch.Tensor:
    """Trials of a sweep, one model each, optimized with ``bnb.optim.Adam``; a trial told to
    freeze its first layer sets that layer's learning rate to 0 with
    ``GlobalOptimManager.get_instance().override_config(weight, "lr", 0.0)``, as the docs show
    for per-parameter options. Reset: the manager's settings cleared (``initialize()``) before the
    trial."""
    manager = bnb.optim.GlobalOptimManager.get_instance()
    if reset:
        manager.initialize()
    model = _model(seed)
    if prompt.startswith("freeze"):
        manager.override_config(model[0].weight, "lr", 0.0)
    optimizer = bnb.optim.Adam(model.parameters(), lr=0.01)
    generator = torch.Generator().manual_seed(seed)
    x, y = torch.randn(16, 8, generator=generator), torch.randn(16, 1, generator=generator)
    for _ in range(3):
        optimizer.zero_grad()
        nn.functional.mse_loss(model(x), y).backward()
        optimizer.step()
    return _weights(model)


def keep_settings_with_their_parameter() -> None:
    """The fix bitsandbytes can make: a parameter's settings are looked up by the parameter
    (``pid2config``, which ``get_config`` already reads), never by its position in an optimizer's
    groups (``index2config``, process-wide: the next optimizer's parameter at that position is
    given them). Patched in here: ``get_config`` reads no position."""
    optimizer = bnb.optim.optimizer.Optimizer8bit
    get_config = optimizer.get_config

    def get_config_by_parameter(self, gindex, pindex, group):
        by_position, self.mng.index2config = self.mng.index2config, {}
        try:
            return get_config(self, gindex, pindex, group)
        finally:
            self.mng.index2config = by_position
    optimizer.get_config = get_config_by_parameter


@drives(place(LIBRARY, "optim/optimizer.py", "self.mng.pid2config[id(p)] = config"), fix=keep_settings_with_their_parameter)
def embedding_sweep(prompt: str, seed: int, reset: bool = False) -> torch.Tensor:
    """Models of a sweep trained one after the other with ``bnb.optim.Adam8bit``: a text model
    starts with ``bnb.nn.StableEmbedding`` (which asks the manager for 32-bit optimizer state for
    its weight, as its docs say), the others with a linear layer. Reset: the manager's settings
    cleared (``initialize()``) before the model is built."""
    manager = bnb.optim.GlobalOptimManager.get_instance()
    if reset:
        manager.initialize()
    torch.manual_seed(seed)
    generator = torch.Generator().manual_seed(seed)
    if "text" in prompt:
        model = nn.Sequential(bnb.nn.StableEmbedding(100, 64), nn.Flatten(), nn.Linear(64 * 4, 1))
        x = torch.randint(0, 100, (16, 4), generator=generator)
    else:  # a first weight of 8192 elements: over min_8bit_size, so its state is 8-bit unless told otherwise
        model = nn.Sequential(nn.Linear(128, 64), nn.Tanh(), nn.Linear(64, 1))
        x = torch.randn(16, 128, generator=generator)
    y = torch.randn(16, 1, generator=generator)
    optimizer = bnb.optim.Adam8bit(model.parameters(), lr=0.01)
    for _ in range(3):
        optimizer.zero_grad()
        nn.functional.mse_loss(model(x), y).backward()
        optimizer.step()
    return _weights(model)


RECIPES = (frozen_layer_trials, embedding_sweep)
__getattr__ = as_calls(RECIPES)
