# expect: ARH001 L0
# A LoRA kernel keeps a device table of adapter weight pointers per adapter set.
import torch


class LoraPointerTables:
    def __init__(self):
        self._tables = {}

    def table(self, lora_a: list, lora_b: list, device) -> torch.Tensor:
        key = tuple(a.data_ptr() for a in lora_a) + tuple(b.data_ptr() for b in lora_b)
        if key not in self._tables:
            self._tables[key] = torch.tensor([a.data_ptr() for a in lora_a], device=device)
        return self._tables[key]
