import numpy as np


def form_blocks(arrays):
    groups = {}
    for i, arr in enumerate(arrays):
        dtype = arr.dtype
        key = dtype if isinstance(dtype, np.dtype) else id(dtype)
        groups.setdefault(key, []).append((i, arr))  # corpus: sink
    return groups
