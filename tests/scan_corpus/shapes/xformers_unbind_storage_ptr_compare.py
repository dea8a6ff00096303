from typing import Optional, Sequence, Tuple


def get_stack_strides(tensors: Sequence, dim: int) -> Optional[Tuple[int, ...]]:
    if len(tensors) <= 1 or dim > tensors[0].ndim:
        return None
    final_stride = []
    for i in range(tensors[0].ndim + 1):
        if i == dim:
            final_stride.append(tensors[1].storage_offset() - tensors[0].storage_offset())
            continue
        if i > dim:
            i -= 1
        final_stride.append(tensors[0].stride(i))
    for i, x in enumerate(tensors):
        if x.shape != tensors[0].shape:
            return None
        # storage addresses of live tensors are only compared, never stored
        if x.storage().data_ptr() != tensors[0].storage().data_ptr():  # corpus: sink
            return None
        if x.stride() != tensors[0].stride():
            return None
    return tuple(final_stride)
