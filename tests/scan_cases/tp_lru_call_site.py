# expect: ARH002 L1
from functools import lru_cache

import torch


@lru_cache(maxsize=8)
def normalised(x):
    return x / x.norm()


def step():
    weights = torch.randn(16)
    return normalised(weights)
