import weakref

import torch

_MODULE_TO_INP_DTYPE = weakref.WeakKeyDictionary()


def cast_input(dtype, module, x):
    if not torch.is_floating_point(x) or x.dtype == dtype:
        return x
    _MODULE_TO_INP_DTYPE[module] = x.dtype  # corpus: sink
    return x.to(dtype)
