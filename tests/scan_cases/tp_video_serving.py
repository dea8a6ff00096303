# expect: ARH001 L0
# A video server reusing the cross-attention K/V of the prompt across denoise steps.
import torch


class CrossAttnKV:
    def __init__(self, to_k, to_v):
        self.to_k, self.to_v = to_k, to_v
        self._kv = {}

    def __call__(self, encoder_hidden_states: torch.Tensor):
        key = (encoder_hidden_states.data_ptr(), encoder_hidden_states.shape)
        if key not in self._kv:
            self._kv[key] = (self.to_k(encoder_hidden_states), self.to_v(encoder_hidden_states))
        return self._kv[key]
