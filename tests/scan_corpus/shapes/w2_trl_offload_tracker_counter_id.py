class saved_tensors_hooks:
    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook


class OffloadActivations(saved_tensors_hooks):
    def __init__(self, min_offload_size: int = 1024) -> None:
        self.min_tensor_size_bytes = min_offload_size
        self.tracker = {}  # tensor_id => (new_tensor, if_modified)
        self.tensor_id = 0

        def get_tensor_id() -> int:
            # create a unique id for each tensor we are managing
            self.tensor_id += 1
            return self.tensor_id

        def pack_tensor(activation) -> int:
            tensor_id = get_tensor_id()
            if activation.nbytes >= self.min_tensor_size_bytes:
                cpu_tensor = activation.to("cpu")
                self.tracker[tensor_id] = (  # corpus: sink
                    cpu_tensor,
                    True,
                )
            else:
                self.tracker[tensor_id] = (
                    activation,
                    False,
                )
            return tensor_id

        def unpack_tensor_single_stream(unpack_tensor_id: int):
            if unpack_tensor_id not in self.tracker:
                raise ValueError(f"Untracked tensor with id {unpack_tensor_id}")
            maybe_accelerator_tensor, modified = self.tracker[unpack_tensor_id]
            del self.tracker[unpack_tensor_id]
            return maybe_accelerator_tensor

        super().__init__(pack_tensor, unpack_tensor_single_stream)
