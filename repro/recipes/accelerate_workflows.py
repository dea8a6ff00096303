"""accelerate's big-model helpers driven as loading and offloading code drives them: each job
builds a small model whose embedding and output layer share one weight (as language models tie
them), saves or offloads it, loads or dispatches it the way accelerate's docs show, and returns its
output; jobs run one after the other in one process, as a server loads model after model."""

import tempfile

import torch
from accelerate import dispatch_model
from accelerate.hooks import remove_hook_from_module
from accelerate.utils import find_tied_parameters, modeling, offload_state_dict
from accelerate.utils.offload import OffloadedWeightsLoader
from torch import nn

from repro.recipes import as_calls, drives, place

LIBRARY = "accelerate"
SCAN = ("hooks.py", "big_modeling.py", "utils")  # accelerate's parts the hunt scans for places
PROMPTS = ("load", "load again", "offload", "load")
# Places scan proposes that no run on a machine like this one can reach, and why.
UNREACHABLE = {
    "utils/fsdp_utils.py:561": "FSDP materialises a model's weights only across a process group of devices",
}
WIDTH = 32


class TiedModel(nn.Module):
    """Its output layer declared next to its embedding, so a checkpoint lists the tied pair first."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(WIDTH, WIDTH)
        self.head = nn.Linear(WIDTH, WIDTH, bias=False)
        self.head.weight = self.emb.weight  # tied
        self.blocks = nn.ModuleList([nn.Linear(WIDTH, WIDTH, bias=False) for _ in range(4)])

    def forward(self, tokens):
        hidden = self.emb(tokens)
        for block in self.blocks:
            hidden = torch.tanh(block(hidden))
        return self.head(hidden)


def _model(seed: int) -> TiedModel:
    torch.manual_seed(seed)
    return TiedModel()


TOKENS = torch.arange(8).view(2, 4)


def pin_tied_sources() -> None:
    """The fix accelerate can make: an entry of ``tied_params_map`` keeps the tensor whose
    ``data_ptr()`` is its key alive while the map lives, so that no other tensor can take that
    address while the key names it (patched in here: the entry holds the tensor under a key that
    is no device)."""
    original = modeling.set_module_tensor_to_device

    def set_module_tensor_to_device(module, tensor_name, device, value=None, *args, tied_params_map=None, **kwargs):
        if tied_params_map is not None:
            for tensor in (value, module.get_parameter(tensor_name)):
                if tensor is not None and tensor.data_ptr() in tied_params_map:
                    tied_params_map[tensor.data_ptr()].setdefault("source", tensor)
        return original(module, tensor_name, device, value, *args, tied_params_map=tied_params_map, **kwargs)
    modeling.set_module_tensor_to_device = set_module_tensor_to_device


@drives(place(LIBRARY, "utils/modeling.py",
              "and value.data_ptr() in tied_params_map\nand device in tied_params_map[value.data_ptr()]"),
        fix=pin_tied_sources)
def tied_checkpoint_loads(prompt: str, seed: int, reset: bool = False) -> torch.Tensor:
    """A tied model's checkpoint offloaded in accelerate's format (``offload_state_dict``) and
    loaded tensor by tensor into a new model with ``set_module_tensor_to_device``, passing the
    ``tied_params_map`` that ``dispatch_model`` builds (one entry per tied weight, keyed by its
    ``data_ptr()``) so that tied weights are loaded once. Reset: no ``tied_params_map``."""
    source = _model(seed)
    with tempfile.TemporaryDirectory() as folder:
        offload_state_dict(folder, source.state_dict())
        loader = OffloadedWeightsLoader(save_folder=folder)
        model = _model(seed + 1000)  # another initialisation, overwritten by the checkpoint
        tied = None if reset else {model.get_parameter(name).data_ptr(): {}
                                   for group in find_tied_parameters(model) for name in group}
        for name in source.state_dict():  # looked up in its module at each call: the fix, patched in, is seen
            modeling.set_module_tensor_to_device(model, name, "cpu", value=loader[name], tied_params_map=tied)
    with torch.no_grad():
        return model(TOKENS)


@drives(place(LIBRARY, "hooks.py", "and recursive_getattr(module, name).data_ptr() in self.tied_params_map"),
        place(LIBRARY, "hooks.py", "self.tied_pointers_to_remove.add((value.data_ptr(), execution_device))"))
def offloaded_models(prompt: str, seed: int, reset: bool = False) -> torch.Tensor:
    """A tied model dispatched with some blocks on the CPU and some offloaded to disk
    (``dispatch_model`` with a device map and an offload folder), run twice and dropped; the next
    job dispatches the next model. Reset: the hooks removed (``remove_hook_from_module(model,
    recurse=True)``) before the model is dropped."""
    with tempfile.TemporaryDirectory() as folder:
        device_map = {"emb": "cpu", "blocks.0": "disk", "blocks.1": "cpu", "blocks.2": "disk", "blocks.3": "cpu",
                      "head": "disk" if "offload" in prompt else "cpu"}
        model = dispatch_model(_model(seed), device_map=device_map, offload_dir=folder)
        with torch.no_grad():
            outputs = torch.stack([model(TOKENS), model(TOKENS)])
        if reset:
            remove_hook_from_module(model, recurse=True)
    return outputs


RECIPES = (tied_checkpoint_loads, offloaded_models)
__getattr__ = as_calls(RECIPES)
