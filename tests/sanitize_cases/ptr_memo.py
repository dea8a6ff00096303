"""A user's script: a helper class that memoises a projection by the input's data_ptr()."""

import torch


class Projector:
    def __init__(self):
        self.weight = torch.randn(4096, 64, generator=torch.Generator().manual_seed(0))
        self._memo = {}

    def __call__(self, embedding):
        key = (embedding.data_ptr(), tuple(embedding.shape))
        if key not in self._memo:
            self._memo[key] = embedding @ self.weight
        return self._memo[key]


def serve(prompts):
    projector, served = Projector(), []
    for i, _ in enumerate(prompts):
        embedding = torch.full((77, 4096), float(i))  # a T5 encoder's output, freed after the request
        served.append(projector(embedding)[0, 0].item())
        del embedding
    return served


if __name__ == "__main__":
    print(serve(["red", "blue", "green", "gold", "teal", "pink", "gray", "plum"]))
