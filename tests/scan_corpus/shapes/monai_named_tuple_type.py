import functools

import torch


@functools.lru_cache(None)  # corpus: sink
def named_tuple_like_type(func):
    name = getattr(func, "__name__", None)
    return getattr(torch.return_types, name, None) if name else None
