# expect: ARH001 L0
import torch

_PROJECTED = {}


def project(x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    key = (x.data_ptr(), tuple(x.shape), x.dtype)
    if key not in _PROJECTED:
        _PROJECTED[key] = x @ weight
    return _PROJECTED[key]
