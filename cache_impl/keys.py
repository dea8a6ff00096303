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
    other field with ``a`` but reads other values (a real tensor's conjugate is
    itself, so its ``conj`` is always False).

    The same fingerprint does *not* mean the same data: once the tensor is freed
    the allocator may hand its address to a fresh tensor of the same layout,
    whose ``_version`` starts at 0 just like the old one did.

    Tensors whose address says nothing about their data are refused with a
    one-line TypeError (see :func:`unkeyable_reason`): a silent shared key would
    be a false hit waiting to happen. This is on every lookup's path, so the
    common case pays only for what it reads anyway.
    """
    if type(t) is not torch.Tensor:
        check_keyable(t)  # not a tensor, or a subclass that wraps its data
    try:
        ptr, shape, stride = t.data_ptr(), tuple(t.shape), t.stride()
    except (RuntimeError, ValueError):  # sparse, mkldnn, nested, uninitialized: no one address or layout
        raise TypeError(unkeyable_reason(t)) from None
    dtype = t.dtype
    if (not ptr and t.numel()) or dtype in QUANTIZED:  # data-less (meta, functional); a scale is not in the key
        raise TypeError(unkeyable_reason(t))
    version = None if t.is_inference() else t._version
    return (ptr, shape, stride, dtype, t.device, version, dtype.is_complex and t.is_conj(), t.is_neg())


QUANTIZED = frozenset({torch.qint8, torch.quint8, torch.qint32, torch.quint4x2, torch.quint2x4})


def unkeyable_reason(t: torch.Tensor) -> str | None:
    """Why ``t`` cannot be keyed by its address, in one line; None when it can.
    Sparse and nested tensors keep their data in several buffers, meta tensors
    have none, wrapper subclasses (``__torch_dispatch__``) report 0 or their
    own, a quantized tensor's scale is not in the key, and a tensor whose
    ``data_ptr()`` is 0 (functional wrappers, storage resized to nothing) says
    nothing about its data at all."""
    if isinstance(t, torch.nn.parameter.UninitializedTensorMixin):
        return f"cannot key an {type(t).__name__}: it has no data yet"
    if t.is_nested:
        return "cannot key a nested tensor: data_ptr, shape and stride do not describe its components"
    if t.layout is not torch.strided:
        return f"cannot key a {t.layout} tensor: its data lives in several buffers, not at one address"
    if type(t) is not torch.Tensor and torch._C._dispatch_keys(t).has(torch._C.DispatchKey.Python):
        return (f"cannot key a {type(t).__name__}: a tensor subclass with __torch_dispatch__ "
                "(a wrapper) has no address of its own data")
    if t.is_meta:
        return "cannot key a meta tensor: it has no data"
    if t.is_quantized:
        return "cannot key a quantized tensor: its scale and zero point are not in the key"
    try:
        no_data = t.data_ptr() == 0 and t.numel() > 0
    except (RuntimeError, ValueError) as exc:
        return f"cannot key this {type(t).__name__}: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}"
    if no_data:
        return (f"cannot key a {type(t).__name__} whose data_ptr() is 0 (a functional or zero tensor, or a storage "
                "resized to nothing): its address says nothing about its data")
    return None


def check_keyable(t) -> None:
    """Raise the one-line TypeError that :func:`fingerprint` raises for ``t``, if any."""
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"cache source must be a torch.Tensor, got {type(t).__name__}")
    reason = unkeyable_reason(t)
    if reason:
        raise TypeError(reason)


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
