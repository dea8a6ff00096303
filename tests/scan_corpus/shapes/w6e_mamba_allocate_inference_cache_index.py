from functools import partial


class Block:
    def __init__(self, layer_idx):
        self.layer_idx = layer_idx

    def allocate_inference_cache(self, batch_size, max_seqlen, dtype=None):
        return ([0.0] * batch_size, [0.0] * batch_size)


def create_block(layer_idx=None):
    block = Block(layer_idx)
    block.layer_idx = layer_idx
    return block


class MixerModel:
    def __init__(self, n_layer):
        self.layers = [create_block(layer_idx=i) for i in range(n_layer)]

    def allocate_inference_cache(self, batch_size, max_seqlen, dtype=None, **kwargs):
        return {
            i: layer.allocate_inference_cache(batch_size, max_seqlen, dtype=dtype, **kwargs)  # corpus: sink
            for i, layer in enumerate(self.layers)
        }


class MambaLMHeadModel:
    def __init__(self, n_layer):
        self.backbone = MixerModel(n_layer)

    def allocate_inference_cache(self, batch_size, max_seqlen, dtype=None, **kwargs):
        return self.backbone.allocate_inference_cache(batch_size, max_seqlen, dtype=dtype, **kwargs)


make = partial(MambaLMHeadModel, 2)
