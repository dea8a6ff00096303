import functools

import torch


@functools.lru_cache(2)  # corpus: sink
def device_module(device_type: str):
    module = getattr(torch, device_type, None)
    if module is None:
        raise RuntimeError(f"no module for {device_type}")
    return module
