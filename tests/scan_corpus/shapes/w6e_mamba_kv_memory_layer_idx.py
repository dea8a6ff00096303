from dataclasses import dataclass, field


@dataclass
class InferenceParams:
    max_seqlen: int
    max_batch_size: int
    seqlen_offset: int = 0
    key_value_memory_dict: dict = field(default_factory=dict)


class Mamba:
    def __init__(self, d_inner, d_state, layer_idx=None):
        self.d_inner = d_inner
        self.d_state = d_state
        self.layer_idx = layer_idx

    def forward(self, hidden_states, inference_params=None):
        if inference_params is not None:
            conv_state, ssm_state = self._get_states_from_cache(inference_params, len(hidden_states))
            return conv_state, ssm_state
        return hidden_states

    def _get_states_from_cache(self, inference_params, batch_size, initialize_states=False):
        assert self.layer_idx is not None
        if self.layer_idx not in inference_params.key_value_memory_dict:
            conv_state = [0.0] * (batch_size * self.d_inner)
            ssm_state = [0.0] * (batch_size * self.d_state)
            inference_params.key_value_memory_dict[self.layer_idx] = (conv_state, ssm_state)  # corpus: sink
        else:
            conv_state, ssm_state = inference_params.key_value_memory_dict[self.layer_idx]
        return conv_state, ssm_state
