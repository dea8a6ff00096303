# pytorch_memlab/mem_reporter.py: MemReporter.get_stats names parameter gradients by id
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

    def collect_tensor(self):
        if self.pre_collect:
            gc.collect()
        objects = gc.get_objects()
        tensors = [obj for obj in objects if isinstance(obj, torch.Tensor)]
        for t in tensors:
            self.device_mapping[t.device].append(t)

    def get_stats(self):
        self.device_tensor_stat.clear()

        def get_tensor_stat(tensor):
            name = self._get_tensor_name(tensor)
            numel = tensor.numel()
            memory_size = math.ceil(tensor.untyped_storage().size() * tensor.element_size()
                                    / PYTORCH_MIN_ALLOCATE) * PYTORCH_MIN_ALLOCATE
            size = tuple(tensor.size())
            return [(name, size, numel, memory_size)]

        for device, tensors in self.device_mapping.items():
            tensor_stats = []
            for tensor in tensors:
                if tensor.numel() == 0:
                    continue
                tensor_stats += get_tensor_stat(tensor)
                if isinstance(tensor, torch.nn.Parameter):
                    if tensor.grad is not None:
                        self.tensor_name[id(tensor.grad)] = '{}.grad'.format(  # corpus: sink
                            self._get_tensor_name(tensor)
                        )
                        tensor_stats += get_tensor_stat(tensor.grad)
            self.device_tensor_stat[device] = tensor_stats

        self.device_mapping.clear()

    def print_stats(self, verbose=False, target_device=None):
        for device, tensor_stats in self.device_tensor_stat.items():
            for name, size, numel, mem in tensor_stats:
                print(name, size, mem)

    def report(self, verbose=False, device=None):
        self.collect_tensor()
        self.get_stats()
        self.print_stats(verbose, target_device=device)
