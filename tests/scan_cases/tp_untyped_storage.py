# expect: ARH001 L0
import torch

_host_copies: dict = {}


def to_host(t: torch.Tensor) -> torch.Tensor:
    ptr = t.untyped_storage().data_ptr()
    copy = _host_copies.get(ptr)
    if copy is None:
        copy = _host_copies[ptr] = t.cpu()
    return copy
