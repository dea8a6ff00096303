def _storage_Use_Count(cdata) -> int:
    # stands for torch._C._storage_Use_Count: reads the refcount of the storage at this address
    return 0


class OffloadActivations:
    def __init__(self) -> None:
        self.bwd_tensor_stash = {}  # tensor_id => activation
        self.bwd_ev_stash = {}  # tensor_id => ev0

        def unpack_tensor_with_streams(unpack_tensor_id: int, maybe_accelerator_tensor):
            self.bwd_tensor_stash[unpack_tensor_id] = maybe_accelerator_tensor
            storage_refcount = _storage_Use_Count(maybe_accelerator_tensor.untyped_storage()._cdata)

            def hook(outputs, inputs):
                unpacked_tensor = self.bwd_tensor_stash[unpack_tensor_id]
                if _storage_Use_Count(unpacked_tensor.untyped_storage()._cdata) > storage_refcount:  # corpus: sink
                    unpacked_tensor.record_stream(None)
                    del self.bwd_tensor_stash[unpack_tensor_id]
                else:
                    self.bwd_ev_stash[unpack_tensor_id] = object()

            return hook

        self.unpack = unpack_tensor_with_streams
