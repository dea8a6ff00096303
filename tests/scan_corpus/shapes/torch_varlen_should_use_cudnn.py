from functools import lru_cache


@lru_cache(maxsize=8)  # corpus: sink
def use_cudnn(device_index: int) -> bool:
    return device_index >= 0
