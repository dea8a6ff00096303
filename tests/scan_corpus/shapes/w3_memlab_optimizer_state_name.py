# pytorch_memlab/mem_reporter.py: MemReporter.add_optimizer names optimizer state tensors by id
import gc
import math
from collections import defaultdict

import torch

PYTORCH_MIN_ALLOCATE = 2 ** 9


class MemReporter():
    def __init__(self, model=None, pre_collect=False):
        self.tensor_name = {}
        self.device_mapping = defaultdict(list)
        self.device_tensor_stat = {}
        self.name_idx = 0
        self.pre_collect = pre_collect

        tensor_names = defaultdict(list)
        if model is not None:
            for name, param in model.named_parameters():
                tensor_names[param].append(name)

        for param, name in tensor_names.items():
            self.tensor_name[id(param)] = '+'.join(name)  # corpus: sink

    def _get_tensor_name(self, tensor):
        tensor_id = id(tensor)
        if tensor_id in self.tensor_name:  # corpus: sink
            name = self.tensor_name[tensor_id]  # corpus: sink
        else:
            name = type(tensor).__name__ + str(self.name_idx)
            self.tensor_name[tensor_id] = name  # corpus: sink
            self.name_idx += 1
        return name

    def add_optimizer(self, optimizer):
        optimizer_name = optimizer.__class__.__name__
        for param, states in optimizer.state.items():
            param_name = self.tensor_name[id(param)]  # corpus: sink
            for name, tensor in states.items():
                self.tensor_name[id(tensor)] = f'{optimizer_name}.{param_name}.{name}'  # corpus: sink
