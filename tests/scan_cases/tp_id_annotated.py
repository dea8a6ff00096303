# expect: ARH001 L0
import torch


class NormCache:
    def __init__(self):
        self._norms = {}

    def norm(self, t: torch.Tensor) -> torch.Tensor:
        if id(t) not in self._norms:
            self._norms[id(t)] = t.norm()
        return self._norms[id(t)]
