"""peft's adapters driven as a LoRA sweep drives them: each job builds a small base model from a
config (no checkpoint, no model hub) and the seed, wraps it with ``get_peft_model``, trains the
adapter a few steps and evaluates it; jobs run one after the other in one process, the sweep's
LoRA settings written once, as a script writes them."""

import copy
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # never reach for a model hub

import peft
import torch
from peft import LoraConfig
from transformers import LlamaConfig, LlamaForCausalLM

from repro.recipes import as_calls, drives, place

LIBRARY = "peft"
SCAN = ("tuners", "utils", "peft_model.py", "mapping_func.py")  # peft's parts the hunt scans for places
# A prompt names the base model's depth: a sweep over model sizes.
PROMPTS = ("2 layers", "3 layers", "3 layers", "2 layers")


def lora_settings() -> LoraConfig:
    """LoRA on every linear layer, as the docs show."""
    return LoraConfig(r=4, lora_alpha=8, target_modules="all-linear", init_lora_weights="gaussian")


LORA = lora_settings()  # the sweep's settings, written once


def _base(prompt: str, seed: int) -> LlamaForCausalLM:
    torch.manual_seed(seed)
    config = LlamaConfig(num_hidden_layers=int(prompt.split()[0]), hidden_size=32, intermediate_size=64,
                         num_attention_heads=2, num_key_value_heads=2, vocab_size=100)
    return LlamaForCausalLM(config)


def copy_the_config() -> None:
    """The fix peft can make: ``get_peft_model`` works on a copy of the config it is given, so that
    resolving ``"all-linear"`` for one model does not rewrite the caller's config for the next one
    (patched in here)."""
    get_peft_model = peft.get_peft_model

    def get_peft_model_on_a_copy(model, peft_config, *args, **kwargs):
        return get_peft_model(model, copy.deepcopy(peft_config), *args, **kwargs)
    peft.get_peft_model = get_peft_model_on_a_copy


@drives(place(LIBRARY, "tuners/tuners_utils.py", "peft_config.target_modules = linear_module_names"),
        fix=copy_the_config)
def all_linear_sweep(prompt: str, seed: int, reset: bool = False) -> torch.Tensor:
    """LoRA on every linear layer (``target_modules="all-linear"``) of base models of the depth the
    prompt names, one config for the sweep; each adapter trained two steps, then the model
    evaluated. Reset: a new config per model."""
    # get_peft_model looked up in peft at each call: the fix, patched in, is seen
    model = peft.get_peft_model(_base(prompt, seed), lora_settings() if reset else LORA)
    generator = torch.Generator().manual_seed(seed)
    tokens = torch.randint(0, 100, (2, 8), generator=generator)
    optimizer = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.1)
    for _ in range(2):
        optimizer.zero_grad()
        model(input_ids=tokens, labels=tokens).loss.backward()
        optimizer.step()
    model.eval()
    with torch.no_grad():
        return model(input_ids=tokens).logits


RECIPES = (all_linear_sweep,)
__getattr__ = as_calls(RECIPES)
