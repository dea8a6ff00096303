class OffloadActivations:
    def __init__(self, min_offload_size=1024):
        self.min_tensor_size_bytes = min_offload_size
        self.tracker = {}  # tensor_id => (new_tensor, if_modified)
        self.tensor_id: int = 0

        def get_tensor_id() -> int:
            # create a unique id for each tensor we are managing
            self.tensor_id += 1
            return self.tensor_id

        def pack_tensor(activation):
            num_bytes = activation.element_size() * activation.nelement()
            tensor_id = get_tensor_id()
            if num_bytes >= self.min_tensor_size_bytes:
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
            maybe_gpu_tensor, modified = self.tracker[unpack_tensor_id]
            if modified:
                maybe_gpu_tensor = maybe_gpu_tensor.to("cuda", non_blocking=True)
            del self.tracker[unpack_tensor_id]
            return maybe_gpu_tensor

        self.pack = pack_tensor
        self.unpack = unpack_tensor_single_stream
