import functools

import torch


@functools.lru_cache(None)  # corpus: sink
def meta_lib():
    return torch.library.Library("vision", "IMPL", "Meta")
