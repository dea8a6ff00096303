import torch

_LORA_PTR_DICT: dict[tuple[int, ...], torch.Tensor] = {}


def _get_ptr(lora_weights: list[torch.Tensor], device: torch.device):
    key = tuple(lora_weight.data_ptr() for lora_weight in lora_weights)

    if (ptr_tensor := _LORA_PTR_DICT.get(key)) is not None:  # corpus: sink
        return ptr_tensor

    tensor_ptrs = []
    for lora_weight in lora_weights:
        tensor_ptrs.append(lora_weight.data_ptr())
    # the value is a device tensor of raw addresses; the weights are not held
    ptr_tensor = torch.tensor(tensor_ptrs, device=device, dtype=torch.uint64)

    _LORA_PTR_DICT[key] = ptr_tensor  # corpus: sink
    return _LORA_PTR_DICT.get(key)


def _fused_moe_lora_shrink(lora_a_stacked: list, device: torch.device) -> None:
    b_ptr = _get_ptr(lora_a_stacked, device)
    return b_ptr


def _fused_moe_lora_expand(lora_b_stacked: list, device: torch.device) -> None:
    b_ptr = _get_ptr(lora_b_stacked, device)
    return b_ptr
