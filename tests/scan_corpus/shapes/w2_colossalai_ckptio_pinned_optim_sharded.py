def async_move_save_state_dict_shards(sharded_state_dict, checkpoint, pinned_state_dict):
    # reuses the given pinned buffers if any, else allocates new pinned CPU copies
    new_pinned_state_dict = pinned_state_dict if pinned_state_dict is not None else {}
    writers = []
    for shard in sharded_state_dict:
        for k, v in shard.items():
            if k not in new_pinned_state_dict:
                new_pinned_state_dict[k] = v.detach().clone()
            new_pinned_state_dict[k].copy_(v)
    return 0, new_pinned_state_dict, writers


class CheckpointIO:
    def __init__(self):
        self.pinned_state_dicts = {}
        self.async_writers = []


class GeneralCheckpointIO(CheckpointIO):
    def save_sharded_optimizer(self, optimizer, checkpoint, gather_dtensor: bool, prefix: str, size_per_shard: int, use_async: bool = False):
        state_dict = optimizer.state_dict()
        sharded_state = [state_dict["state"]]
        if use_async:
            pinned_state_dict = self.pinned_state_dicts.get(id(optimizer), None)
            total_size, new_pinned_state_dict, writers = async_move_save_state_dict_shards(
                sharded_state_dict=sharded_state,
                checkpoint=checkpoint,
                pinned_state_dict=pinned_state_dict,
            )
            self.pinned_state_dicts[id(optimizer)] = new_pinned_state_dict  # corpus: sink
            self.async_writers.extend(writers)
