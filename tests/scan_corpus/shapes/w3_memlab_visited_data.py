# pytorch_memlab/mem_reporter.py: MemReporter.get_stats dedupes storages by data_ptr
import math

import torch

PYTORCH_MIN_ALLOCATE = 2 ** 9


class MemReporter():
    def get_stats(self):
        visited_data = {}
        self.device_tensor_stat.clear()

        def get_tensor_stat(tensor):
            name = self._get_tensor_name(tensor)
            numel = tensor.numel()
            memory_size = math.ceil(tensor.untyped_storage().size() * tensor.element_size()
                                    / PYTORCH_MIN_ALLOCATE) * PYTORCH_MIN_ALLOCATE
            data_ptr = tensor.untyped_storage().data_ptr()
            if data_ptr in visited_data:  # corpus: sink
                name = '{}(->{})'.format(name, visited_data[data_ptr])  # corpus: sink
                memory_size = 0
            else:
                visited_data[data_ptr] = name  # corpus: sink
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
                        tensor_stats += get_tensor_stat(tensor.grad)
            self.device_tensor_stat[device] = tensor_stats

        self.device_mapping.clear()
