# expect: none
import torch


class ParamCache:
    def __init__(self, model):
        self._by_name = {}
        for name, p in model.named_parameters():
            self._by_name[name] = p.detach().clone()

    def get(self, name: str) -> torch.Tensor:
        return self._by_name[name]

    def put(self, name: str, value: torch.Tensor) -> None:
        self._by_name[name] = value
