def create_pinned_state_dict(state_dict):
    # fresh pinned CPU tensors; no reference to the module is kept
    return {k: v.detach().clone() for k, v in state_dict.items()}


class CheckpointIO:
    def __init__(self):
        self.pinned_state_dicts = {}
        self.async_writers = []


class GeneralCheckpointIO(CheckpointIO):
    pass


class DistributedCheckpointIO(GeneralCheckpointIO):
    def __init__(self, dp_rank: int, sp_rank: int) -> None:
        super().__init__()
        self.dp_rank = dp_rank
        self.sp_rank = sp_rank

    @staticmethod
    def model_state_dict(model):
        return dict(model.named_parameters())

    def save_unsharded_model(self, model, checkpoint: str, gather_dtensor: bool, use_safetensors: bool, use_async: bool = False):
        model = model.unwrap()
        if self.dp_rank != 0 and self.sp_rank == 0:
            return
        state_dict = DistributedCheckpointIO.model_state_dict(model)
        if use_async:
            if id(model) not in self.pinned_state_dicts:
                self.pinned_state_dicts[id(model)] = create_pinned_state_dict(state_dict)
            for name, param in state_dict.items():
                self.pinned_state_dicts[id(model)][name].copy_(param)  # corpus: sink
                state_dict[name] = self.pinned_state_dicts[id(model)][name]
            self.async_writers.append((checkpoint, state_dict))
