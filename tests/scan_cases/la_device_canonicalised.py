# expect: none
# A tensor argument is turned into its device before it reaches the cache.
from functools import lru_cache

import torch


@lru_cache
def _capability(device: torch.device = None):
    return torch.cuda.get_device_capability(device)


def capability(device: "torch.device | torch.Tensor | None" = None):
    if isinstance(device, torch.Tensor):
        device = device.device
    return _capability(device)
