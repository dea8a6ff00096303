from functools import cache

import torch


@cache  # corpus: sink
def device_major(device: torch.device) -> int:
    major, _ = torch.cuda.get_device_capability(device)
    return major
