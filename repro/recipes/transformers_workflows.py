"""transformers' models driven as a fine-tuning sweep drives them: each job builds a small model
from a config (no checkpoint, no model hub) and the seed, trains it a few steps and evaluates it;
jobs run one after the other in one process, as in a sweep or a notebook."""

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # never reach for a model hub

import torch
from transformers import DetrConfig, DetrModel, ResNetConfig

from repro.recipes import as_calls, drives, place

LIBRARY = "transformers"
# The shared helpers, generation, and the models whose code scan finds keeping state: DETR's
# position embeddings cached by functools (its copies in other vision models are the same code).
SCAN = ("pytorch_utils.py", "modeling_utils.py", "generation", "models/detr")
PROMPTS = ("learned positions", "learned positions", "sine positions", "learned positions")


def _detr(prompt: str, seed: int) -> DetrModel:
    torch.manual_seed(seed)
    backbone = ResNetConfig(embedding_size=8, hidden_sizes=[8, 16], depths=[1, 1], out_features=["stage2"])
    config = DetrConfig(backbone_config=backbone, d_model=16, encoder_layers=1, decoder_layers=1,
                        encoder_ffn_dim=16, decoder_ffn_dim=16, encoder_attention_heads=2,
                        decoder_attention_heads=2, num_queries=4, dropout=0.0,
                        position_embedding_type="learned" if "learned" in prompt else "sine")
    return DetrModel(config)


@drives(place(LIBRARY, "models/detr/modeling_detr.py", "@compile_compatible_method_lru_cache(maxsize=1)\ndef build_sine_position_embedding("),
        place(LIBRARY, "models/detr/modeling_detr.py", "@compile_compatible_method_lru_cache(maxsize=1)\ndef forward("))
def detr_sweep(prompt: str, seed: int, reset: bool = False) -> torch.Tensor:
    """Small DETR models trained two steps each on images (``pixel_values``, with the mask the
    model makes for them) and evaluated; a prompt names the position embedding (``learned`` or
    ``sine``), whose output ``DetrLearnedPositionEmbedding.forward`` keeps in a process-wide LRU
    cache of one entry. Reset: that entry evicted before the job, by a call with another shape (the
    cache has no public clear)."""
    model = _detr(prompt, seed)
    if reset:
        model.position_embedding(shape=torch.Size([1, 16, 1, 1]), device="cpu", dtype=torch.float32)
    generator = torch.Generator().manual_seed(seed)
    images = torch.randn(2, 3, 32, 32, generator=generator)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for _ in range(2):
        optimizer.zero_grad()
        model(pixel_values=images).last_hidden_state.pow(2).mean().backward()
        optimizer.step()
    model.eval()
    with torch.no_grad():
        return model(pixel_values=images).last_hidden_state


RECIPES = (detr_sweep,)
__getattr__ = as_calls(RECIPES)
