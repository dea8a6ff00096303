import torch


def source_key(t: torch.Tensor):
    return (t.data_ptr(), t.shape, t.stride(), t.dtype)
