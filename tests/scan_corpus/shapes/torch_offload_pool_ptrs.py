import torch

_pool_addrs: set[int] = set()
_free: dict[tuple, list] = {}


def take(numel, dtype):
    buf = torch.empty(numel, dtype=dtype, pin_memory=True)
    _pool_addrs.add(buf.data_ptr())  # corpus: sink
    return buf


def give_back(buf):
    ptr = buf.data_ptr()
    if ptr in _pool_addrs:
        _free.setdefault((buf.nelement(), buf.dtype), []).append(buf)
