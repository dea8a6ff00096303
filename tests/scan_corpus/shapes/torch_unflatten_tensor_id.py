from dataclasses import dataclass


@dataclass(frozen=True)
class TensorID:
    storage: object
    stride: tuple
    size: tuple
    offset: int


def _id(obj):
    if hasattr(obj, "untyped_storage"):
        return TensorID(obj.untyped_storage(), obj.stride(), obj.size(), obj.storage_offset())
    return id(obj)


def params_once(state_dict, names, make):
    id_to_param = {}
    for name in names:
        param = state_dict[name]
        if _id(param) not in id_to_param:
            id_to_param[_id(param)] = make(param)  # corpus: sink
    return id_to_param
