from functools import lru_cache


@lru_cache(maxsize=None)
def init_p2p(device_index):  # corpus: sink
    """
    after a cross-device .to(), triton kernels can touch tensors on other cards.
    """
    import torch

    num_gpus = torch.cuda.device_count()
    tensor = torch.zeros((1,))
    tensor = tensor.to(f"cuda:{device_index}")
    for j in range(num_gpus):
        tensor.to(f"cuda:{j}")
    torch.cuda.empty_cache()
    return
