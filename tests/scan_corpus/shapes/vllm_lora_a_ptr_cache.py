import torch

_LORA_A_PTR_DICT: dict[tuple[int, ...], tuple[torch.tensor, ...]] = {}


def _get_lora_a_ptr(lora_a_weights: list[torch.Tensor], device: torch.device):
    key = tuple(lora_weight.data_ptr() for lora_weight in lora_a_weights)

    if values := _LORA_A_PTR_DICT.get(key):  # corpus: sink
        return values

    lora_strides_d0 = []
    tensor_ptrs = []
    for lora_a_weight in lora_a_weights:
        if lora_a_weight.ndim == 4:
            lora_a_weight = lora_a_weight.squeeze(dim=1)
        tensor_ptrs.append(lora_a_weight.data_ptr())
        lora_strides_d0.append(lora_a_weight.stride(0))
    if len(lora_a_weights) > 1:
        # only raw pointers are kept: the weights themselves are not held
        lora_ptr_tensor = torch.tensor(tensor_ptrs, device=device, dtype=torch.uint64)
    else:
        lora_ptr_tensor = lora_a_weights[0]

    _LORA_A_PTR_DICT[key] = (  # corpus: sink
        lora_ptr_tensor,
        lora_strides_d0[0],
    )
    return _LORA_A_PTR_DICT.get(key)
