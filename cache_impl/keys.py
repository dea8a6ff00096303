"""The one fingerprint of a source tensor that every cache design keys on, and
the storage identity that the L2 designs check beside it."""

from __future__ import annotations

import torch
from torch.multiprocessing.reductions import StorageWeakRef

Fingerprint = tuple

# The StorageImpl's address: the identity of a tensor's storage. Bound once: the
# L2 fast path calls it on every hit.
storage_id = torch._C._storage_id


def fingerprint(t: torch.Tensor) -> Fingerprint:
    """Where a tensor lives and how it is laid out: the pre-fix cache's key.

    ``(data_ptr, shape, stride, dtype, device, version, conj, neg)``. ``version``
    is the tensor's ``_version`` counter, or ``None`` for tensors made under
    ``torch.inference_mode()``, which have no counter at all. ``conj`` and
    ``neg`` are the lazy conjugate and negative bits: ``a.conj()`` shares every
    other field with ``a`` but reads other values.

    The same fingerprint does *not* mean the same data: once the tensor is freed
    the allocator may hand its address to a fresh tensor of the same layout,
    whose ``_version`` starts at 0 just like the old one did.

    Tensors whose address says nothing about their data are refused with a
    one-line TypeError (see :func:`check_keyable`): a silent shared key would be
    a false hit waiting to happen.
    """
    check_keyable(t)
    version = None if t.is_inference() else t._version
    return (t.data_ptr(), tuple(t.shape), t.stride(), t.dtype, t.device, version, t.is_conj(), t.is_neg())


def check_keyable(t) -> None:
    """Raise TypeError unless ``t`` is a dense tensor whose ``data_ptr()`` locates
    all of its data: sparse and nested tensors keep theirs in several buffers,
    meta tensors have none, wrapper subclasses (``__torch_dispatch__``) report 0
    or their own, and a quantized tensor's scale is not in the key."""
    if type(t) is not torch.Tensor and not isinstance(t, torch.Tensor):
        raise TypeError(f"cache source must be a torch.Tensor, got {type(t).__name__}")
    if t.is_nested:
        raise TypeError("cannot key a nested tensor: data_ptr, shape and stride do not describe its components")
    if t.layout is not torch.strided:
        raise TypeError(f"cannot key a {t.layout} tensor: its data lives in several buffers, not at one address")
    if type(t) is not torch.Tensor and torch._C._dispatch_keys(t).has(torch._C.DispatchKey.Python):
        raise TypeError(f"cannot key a {type(t).__name__}: a tensor subclass with __torch_dispatch__ "
                        "(a wrapper) has no address of its own data")
    if t.is_meta:
        raise TypeError("cannot key a meta tensor: it has no data")
    if t.is_quantized:
        raise TypeError("cannot key a quantized tensor: its scale and zero point are not in the key")


def pin_storage(t: torch.Tensor) -> StorageWeakRef:
    """A weak reference to ``t``'s storage. While it is held, that StorageImpl's
    memory is never handed to another storage (its *data* may still be freed),
    so ``storage_id`` stays a unique identity even after the address is reused."""
    return StorageWeakRef(t.untyped_storage())


def check_max_size(max_size: int) -> int:
    """Validate a cache bound: a positive int."""
    if isinstance(max_size, bool) or not isinstance(max_size, int) or max_size < 1:
        raise ValueError(f"max_size must be a positive integer, got {max_size!r}")
    return max_size
