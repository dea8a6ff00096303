"""torch's stateful helpers driven as training and evaluation code drives them: each job builds
its own model and optimizer from the seed, trains or evaluates it, and returns its weights or
outputs; jobs run one after the other in one process, as in a hyperparameter search or a
notebook. What lives longer than a job is set up here, at import, once per process."""

import gc
import weakref
from contextlib import nullcontext

import torch
from torch import nn
from torch.nn.utils import parametrize

from repro.recipes import as_calls, drives, place

LIBRARY = "torch"
SCAN = ("amp", "optim", "nn/utils", "func", "autograd")  # torch's parts the hunt scans for places
PROMPTS = ("prune after clipping", "train", "train", "evaluate")

# One scaler for the process, as a trainer keeps it from trial to trial (its scale is learnt).
SCALER = torch.amp.GradScaler("cpu", init_scale=2.0 ** 10)


def _model(seed: int) -> nn.Module:
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 1))


def _batch(seed: int, step: int) -> tuple[torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(1000 * seed + step)
    return torch.randn(32, 8, generator=generator), torch.randn(32, 1, generator=generator)


def _weights(model: nn.Module) -> torch.Tensor:
    return torch.cat([p.detach().flatten() for p in model.parameters()])


def forget_dead_optimizers() -> None:
    """The fix torch can make: a GradScaler drops an optimizer's state when the optimizer dies,
    so that its id() names nothing once it is gone (patched in here, for the check and the script)."""
    def forgetting(method):
        def call(self, optimizer, *args, **kwargs):
            states = self._per_optimizer_states
            if id(optimizer) not in states:
                weakref.finalize(optimizer, states.pop, id(optimizer), None)
            return method(self, optimizer, *args, **kwargs)
        return call
    torch.amp.GradScaler.unscale_ = forgetting(torch.amp.GradScaler.unscale_)
    torch.amp.GradScaler.step = forgetting(torch.amp.GradScaler.step)


@drives(place(LIBRARY, "amp/grad_scaler.py",
              'optimizer_state = self._per_optimizer_states[id(optimizer)]\n\nif optimizer_state["stage"] is OptState.UNSCALED:'),
        fix=forget_dead_optimizers)
def grad_scaler_trials(prompt: str, seed: int, reset: bool = False) -> torch.Tensor:
    """A search whose trials share the process's GradScaler. Each trial builds a model and an
    optimizer and takes four mixed-precision steps; a trial told to prune is abandoned after
    ``unscale_()`` (done for gradient clipping) and before ``step()``. Reset: a new GradScaler for
    the trial."""
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0 ** 10) if reset else SCALER
    model = _model(seed)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(4):
        x, y = _batch(seed, step)
        with torch.autocast("cpu", dtype=torch.bfloat16):
            loss = nn.functional.mse_loss(model(x).float(), y)
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        if prompt.startswith("prune"):
            scaler.unscale_(optimizer)
            norm = nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            if step == 2:  # the trial is pruned here: its optimizer is dropped before step()
                return torch.cat([_weights(model), norm.reshape(1)])
        scaler.step(optimizer)
        scaler.update()
    return _weights(model)


def forget_dead_modules() -> None:
    """The fix torch can make: the weights ``parametrize.cached()`` keeps for a module are dropped
    when the module dies, so that its id() names nothing once it is gone (patched in here)."""
    register = parametrize.register_parametrization

    def drop(key):
        for cached in [k for k in parametrize._cache if k[0] == key]:
            del parametrize._cache[cached]

    def register_parametrization(module, *args, **kwargs):
        weakref.finalize(module, drop, id(module))
        return register(module, *args, **kwargs)
    parametrize.register_parametrization = register_parametrization


@drives(place(LIBRARY, "nn/utils/parametrize.py", "tensor = _cache.get(key)"), fix=forget_dead_modules)
def parametrized_checkpoints(prompt: str, seed: int, reset: bool = False) -> torch.Tensor:
    """Checkpoints of a weight-normalised model evaluated one after the other inside one
    ``parametrize.cached()`` block (the weights computed once per model, as the docs advise for
    a loop): each checkpoint is built, evaluated and dropped, and its memory collected
    (``del model`` and a collection, as evaluation loops do). Reset: a ``cached()`` block per
    checkpoint."""
    x = _batch(seed, 0)[0]
    outputs = []
    with nullcontext() if reset else parametrize.cached():
        for checkpoint in range(3):
            with parametrize.cached() if reset else nullcontext():
                torch.manual_seed(100 * seed + checkpoint)
                model = nn.utils.parametrizations.weight_norm(nn.Linear(8, 4))
                outputs.append(model(x))
                del model
                gc.collect(1)  # a parametrized module is in a reference cycle; one just built is in the young generations
    return torch.stack(outputs)


@drives(place(LIBRARY, "autograd/graph.py", "ctx.sid_to_tid[sid].add(tid)"),
        place(LIBRARY, "autograd/graph.py", "if tid not in ctx.tid_to_weakhandle:\nhandle = _Handle()"))
def saved_tensor_mutations(prompt: str, seed: int, reset: bool = False) -> torch.Tensor:
    """A training loop that changes, in place, a tensor autograd saved for backward, inside one
    ``torch.autograd.graph.allow_mutation_on_saved_tensors()`` block, as its docs show: autograd
    clones the saved tensor before the change, finding what it saved by address and version
    (``sid_to_tid``, kept for the whole block). Each step's activations are freed before the next,
    so a later step's tensors may land where an earlier step's were. Reset: a block per step."""
    model = _model(seed)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    mutation_allowed = torch.autograd.graph.allow_mutation_on_saved_tensors
    with nullcontext() if reset else mutation_allowed():
        for step in range(4):
            with mutation_allowed() if reset else nullcontext():
                x, y = _batch(seed, step)
                hidden = torch.tanh(model[0](x))  # tanh saves its output for backward
                loss = nn.functional.mse_loss(model[2](hidden * hidden), y)
                hidden.mul_(0.5)  # changed after it was saved: autograd must have cloned it first
                loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            del x, y, hidden, loss
    return _weights(model)


RECIPES = (grad_scaler_trials, parametrized_checkpoints, saved_tensor_mutations)
__getattr__ = as_calls(RECIPES)
