"""The one fingerprint of a source tensor that every cache design keys on."""

from __future__ import annotations

import torch

Fingerprint = tuple


def fingerprint(t: torch.Tensor) -> Fingerprint:
    """Where a tensor lives and how it is laid out: the pre-fix cache's key.

    ``(data_ptr, shape, stride, dtype, device, version)``. ``version`` is the
    tensor's ``_version`` counter, or ``None`` for tensors made under
    ``torch.inference_mode()``, which have no counter at all.

    The same fingerprint does *not* mean the same data: once the tensor is freed
    the allocator may hand its address to a fresh tensor of the same layout,
    whose ``_version`` starts at 0 just like the old one did.
    """
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"cache source must be a torch.Tensor, got {type(t).__name__}")
    version = None if t.is_inference() else t._version
    return (t.data_ptr(), tuple(t.shape), t.stride(), t.dtype, t.device, version)


def check_max_size(max_size: int) -> int:
    """Validate a cache bound: a positive int."""
    if isinstance(max_size, bool) or not isinstance(max_size, int) or max_size < 1:
        raise ValueError(f"max_size must be a positive integer, got {max_size!r}")
    return max_size
