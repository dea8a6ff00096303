# expect: ARH002 L1
from functools import lru_cache
from typing import Optional

import torch


@lru_cache(maxsize=4)
def padding_mask(lengths: Optional[torch.Tensor] = None, max_len: int = 0):
    if lengths is None:
        return None
    return torch.arange(max_len)[None, :] < lengths[:, None]
