from functools import lru_cache

import torch


@lru_cache(maxsize=16)  # corpus: sink
def bf16_ok(device):
    try:
        torch.tensor([1.0], dtype=torch.bfloat16, device=device)
        return True
    except Exception:
        return False
