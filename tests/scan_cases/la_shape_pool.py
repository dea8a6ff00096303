# expect: none
# A buffer pool keyed by layout only: any buffer of the shape will do.
import torch

_pool = {}


def workspace(x: torch.Tensor) -> torch.Tensor:
    key = (tuple(x.shape), x.dtype, str(x.device))
    if key not in _pool:
        _pool[key] = torch.empty_like(x)
    return _pool[key]
