def _update_kv_cache(kv, inference_params, layer_idx):
    assert layer_idx in inference_params.key_value_memory_dict
    kv_cache, _ = inference_params.key_value_memory_dict[layer_idx]  # corpus: sink
    batch_start = inference_params.batch_size_offset
    batch_end = batch_start + len(kv)
    kv_cache[batch_start:batch_end] = kv
    return kv_cache[batch_start:batch_end]


class MHA:
    def __init__(self, layer_idx=None):
        self.layer_idx = layer_idx

    def allocate_inference_cache(self, batch_size, max_seqlen):
        kv_cache = [None] * batch_size
        conv_state = None
        return kv_cache, conv_state

    def _update_kv_cache(self, kv, inference_params):
        assert self.layer_idx is not None, "Generation requires layer_idx in the constructor"
        return _update_kv_cache(kv, inference_params, self.layer_idx)

    def forward(self, x, inference_params=None):
        if inference_params is not None and self.layer_idx not in inference_params.key_value_memory_dict:
            inference_params.key_value_memory_dict[self.layer_idx] = self.allocate_inference_cache(
                len(x), inference_params.max_seqlen
            )
        if inference_params is not None:
            return self._update_kv_cache(x, inference_params)
        return x
