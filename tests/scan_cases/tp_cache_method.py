# expect: ARH002 L1
import functools

from torch import Tensor


class TextProjection:
    def __init__(self, layer):
        self.layer = layer

    @functools.cache
    def project(self, prompt_embeds: Tensor) -> Tensor:
        return self.layer(prompt_embeds)
