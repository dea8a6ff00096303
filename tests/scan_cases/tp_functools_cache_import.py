# expect: ARH002 L1
from functools import cache


@cache
def causal_mask(scores: "torch.Tensor"):
    return scores.new_ones(scores.shape[-2:]).tril()
