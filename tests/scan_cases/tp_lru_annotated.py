# expect: ARH002 L1
import functools

import torch


@functools.lru_cache(maxsize=16)
def rotary_table(positions: torch.Tensor, dim: int) -> torch.Tensor:
    inv = 1.0 / (10000 ** (torch.arange(0, dim, 2) / dim))
    return torch.outer(positions.float(), inv)
