import torch


def frame_has_tensor(values):
    seen = {}

    def has_tensor(obj):
        obj_id = id(obj)
        if obj_id in seen:  # corpus: sink
            return seen[obj_id]
        seen[obj_id] = False
        if isinstance(obj, torch.Tensor):
            seen[obj_id] = True
        elif isinstance(obj, (list, tuple)):
            seen[obj_id] = any(has_tensor(v) for v in obj)
        return seen[obj_id]

    return any(has_tensor(v) for v in values)
