import functools

import torch


@functools.lru_cache(None)  # corpus: sink
def has_ampere_or_later() -> bool:
    return any(torch.cuda.get_device_capability(i)[0] >= 8 for i in range(torch.cuda.device_count()))
