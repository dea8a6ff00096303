# expect: none
# A memo that lives for one traversal, while every tensor it names is alive.
import torch


def count_unique_storages(tensors: list) -> int:
    seen = {}
    for t in tensors:
        if isinstance(t, torch.Tensor):
            seen[t.untyped_storage().data_ptr()] = t
    return len(seen)
