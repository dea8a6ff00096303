import numpy as np


def aligned_zeros(shape, dtype=float, align=16):
    size = int(np.prod(shape)) * np.dtype(dtype).itemsize
    buf = np.empty(size + align + 1, np.uint8)
    offset = buf.__array_interface__["data"][0] % align  # corpus: sink
    if offset != 0:
        offset = align - offset
    return buf[offset:offset + size].view(dtype).reshape(shape)
