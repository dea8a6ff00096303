# deepspeed/runtime/zero/contiguous_memory_allocator.py: dicts keyed by id(tensor); tensor_map pins the tensor, release deletes all


class ContiguousMemoryAllocator(object):
    def __init__(self, size, dtype, device):
        self.buffer = torch.zeros(size, dtype=dtype, device=device)
        self.tensor_addresses = {}
        self.tensor_sizes = {}
        self.tensor_ids = {}
        self.tensor_map = {}
        self.id_to_params = {}

    def assign_to_param(self, tensor, param, numel, shape):
        tensor_id = id(tensor)
        assert tensor_id in self.tensor_map.keys(), "No such tensor allocated by the allocator."
        assert not tensor_id in self.id_to_params.keys(), "This tensor has already been assigned to a param"
        self.id_to_params[tensor_id] = [param]  # corpus: sink
        replicated_tensor = tensor.narrow(0, 0, numel).view(shape)
        param.data = replicated_tensor.data
        param.contiguous_tensor_id = tensor_id

    def release_tensor(self, tensor):
        tensor_id = id(tensor)
        self._release_tensor(tensor_id)
        self._unassign_params(tensor_id)

    def _unassign_params(self, tensor_id):
        if tensor_id in self.id_to_params.keys():
            del self.id_to_params[tensor_id]

    def _release_tensor(self, tensor_id):
        address = self.tensor_addresses[tensor_id]
        del self.tensor_addresses[tensor_id]
        del self.tensor_ids[address]
        del self.tensor_map[tensor_id]
        del self.tensor_sizes[address]

    def _get_new_tensor(self, address, size):
        new_tensor = self.buffer.narrow(0, address, size)
        tensor_id = id(new_tensor)
        self.tensor_addresses[tensor_id] = address  # corpus: sink
        self.tensor_sizes[address] = size
        self.tensor_ids[address] = tensor_id
        self.tensor_map[tensor_id] = new_tensor
        return new_tensor
