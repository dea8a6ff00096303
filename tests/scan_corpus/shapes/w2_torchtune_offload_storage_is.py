class OffloadActivations:
    def __init__(self):
        self.bwd_tensor_stash = {}  # tensor_id => activation
        self.bwd_ev_stash = {}  # tensor_id => ev0
        self.s0 = None

        def unpack_tensor_with_streams(unpack_tensor_id, node, maybe_gpu_tensor):
            brought_back_from_cpu = True
            self.bwd_tensor_stash[unpack_tensor_id] = maybe_gpu_tensor

            def hook(outputs, inputs):
                if brought_back_from_cpu:
                    unpacked_tensor = self.bwd_tensor_stash[unpack_tensor_id]
                    if any(
                        o.untyped_storage() is unpacked_tensor.untyped_storage()  # corpus: sink
                        for o in outputs
                    ):
                        unpacked_tensor.record_stream(self.s0)
                        del self.bwd_tensor_stash[unpack_tensor_id]
                    else:
                        event = self.s0.record_event()
                        self.bwd_ev_stash[unpack_tensor_id] = event
                return outputs

            node.register_hook(hook)
            return maybe_gpu_tensor

        self.unpack = unpack_tensor_with_streams
