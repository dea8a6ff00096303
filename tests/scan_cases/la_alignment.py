# expect: none
import torch

_ALIGN = 16
_kernels = {}


def pick_kernel(t: torch.Tensor):
    aligned = t.data_ptr() % _ALIGN == 0
    return _kernels.get(aligned and t.is_contiguous())
