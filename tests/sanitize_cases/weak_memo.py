"""A user's script: the same memo keyed by the tensor itself, held weakly (torch.utils.weak)."""

import torch
from torch.utils.weak import WeakIdKeyDictionary


class Projector:
    def __init__(self):
        self.weight = torch.randn(4096, 64, generator=torch.Generator().manual_seed(0))
        self._memo = WeakIdKeyDictionary()

    def __call__(self, embedding):
        if embedding not in self._memo:
            self._memo[embedding] = embedding @ self.weight
        return self._memo[embedding]


def serve(prompts):
    projector, served = Projector(), []
    for i, _ in enumerate(prompts):
        embedding = torch.full((77, 4096), float(i))
        served.append(projector(embedding)[0, 0].item())
        del embedding
    return served


if __name__ == "__main__":
    print(serve(["red", "blue", "green", "gold", "teal", "pink", "gray", "plum"]))
