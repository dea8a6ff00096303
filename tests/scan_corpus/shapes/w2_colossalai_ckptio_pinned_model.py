def create_pinned_state_dict(state_dict):
    # new pinned CPU copies of the tensors; holds no reference to the model
    return {k: v.detach().clone() for k, v in state_dict.items()}


def move_and_save(path, state_dict, state_dict_pinned):
    for k, v in state_dict.items():
        state_dict_pinned[k].copy_(v)
    return object()


class CheckpointIO:
    def __init__(self):
        self.pinned_state_dicts = {}
        self.async_writers = []


class GeneralCheckpointIO(CheckpointIO):
    def save_unsharded_model(self, model, checkpoint: str, gather_dtensor: bool, use_safetensors: bool, use_async: bool = False):
        state_dict = model.state_dict()
        if use_async:
            if id(model) not in self.pinned_state_dicts:
                self.pinned_state_dicts[id(model)] = create_pinned_state_dict(state_dict)  # corpus: sink
            writer = move_and_save(checkpoint, state_dict, self.pinned_state_dicts[id(model)])
            self.async_writers.append(writer)
