# expect: none
# torch's own identity-keyed weak dictionary: entries go with their tensor.
import torch
from torch.utils.weak import WeakTensorKeyDictionary

_meta = WeakTensorKeyDictionary()


def tag(t: torch.Tensor, value) -> None:
    _meta[t] = value


def tag_of(t: torch.Tensor):
    return _meta.get(t)
