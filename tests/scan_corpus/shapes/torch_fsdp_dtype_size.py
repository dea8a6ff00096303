import functools

import torch


@functools.lru_cache(8)  # corpus: sink
def dtype_size(dtype):
    return torch.empty((), dtype=dtype).element_size()
