import dataclasses
from typing import Any

import torch


@dataclasses.dataclass
class CUDAGraphEntry:
    batch_descriptor: Any
    cudagraph: Any = None
    output: Any = None
    input_addresses: list[int] | None = None


class CUDAGraphWrapper:
    def __init__(self, runnable, is_debugging_mode: bool):
        self.runnable = runnable
        self.is_debugging_mode = is_debugging_mode
        self.concrete_cudagraph_entries: dict[Any, CUDAGraphEntry] = {}

    def __call__(self, batch_descriptor, *args: Any) -> Any:
        if batch_descriptor not in self.concrete_cudagraph_entries:
            self.concrete_cudagraph_entries[batch_descriptor] = CUDAGraphEntry(
                batch_descriptor=batch_descriptor)
        entry = self.concrete_cudagraph_entries[batch_descriptor]
        if entry.cudagraph is None:
            input_addresses = [
                x.data_ptr() for x in args if isinstance(x, torch.Tensor)
            ]
            entry.input_addresses = input_addresses  # corpus: sink
            entry.cudagraph = torch.cuda.CUDAGraph()
            entry.output = self.runnable(*args)
            return entry.output
        if self.is_debugging_mode:
            new_input_addresses = [
                x.data_ptr() for x in args if isinstance(x, torch.Tensor)
            ]
            # addresses are only compared, never used as a key
            assert new_input_addresses == entry.input_addresses
        entry.cudagraph.replay()
        return entry.output
