from dataclasses import dataclass, field
from typing import Any


@dataclass
class TensorGroup:
    tensor_list: list = field(default_factory=list)
    events: list = field(default_factory=list)
    aux: Any = None


class TensorGroupProcessor:
    @staticmethod
    def tensor_group_process_before_offload(tensor_group: TensorGroup):
        aux = {}
        tensor_group = TensorGroupProcessor._deduplicate_tensors(aux, tensor_group)
        return tensor_group, aux

    @staticmethod
    def _deduplicate_tensors(aux, tensor_group: TensorGroup) -> TensorGroup:
        dedup_tensors: list = []
        dedup_events: list = []
        # local to this call; every tensor is alive in tensor_group.tensor_list
        tensor_to_index: dict[int, int] = {}
        aux["original_tensor_ids"] = []
        for tensor_id, tensor in enumerate(tensor_group.tensor_list):
            if id(tensor) in tensor_to_index:
                aux["original_tensor_ids"].append(tensor_to_index[id(tensor)])
            else:
                tensor_to_index[id(tensor)] = len(dedup_tensors)  # corpus: sink
                dedup_tensors.append(tensor)
                dedup_events.append(tensor_group.events[tensor_id])
                aux["original_tensor_ids"].append(tensor_to_index[id(tensor)])
        # only indices survive in aux; the id-keyed dict is dropped here
        tensor_group.tensor_list = dedup_tensors
        tensor_group.events = dedup_events
        return tensor_group
