# expect: ARH003 L1
import weakref

import torch

_scales = weakref.WeakKeyDictionary()


def scale_of(t: torch.Tensor) -> float:
    if t not in _scales:
        _scales[t] = float(t.abs().max())
    return _scales[t]
