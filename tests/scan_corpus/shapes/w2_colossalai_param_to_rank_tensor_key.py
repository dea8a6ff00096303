class BaseStore:
    def __init__(self, torch_pg):
        self._local_rank = 0


class ParameterStore(BaseStore):
    def __init__(self, torch_pg):
        super().__init__(torch_pg)
        self._fp16_param_to_rank = dict()
        self._is_param_reduced = dict()

    def set_param_to_rank(self, tensor, rank: int) -> None:
        self._fp16_param_to_rank[tensor] = rank  # corpus: sink

    def get_param_rank(self, tensor) -> int:
        return self._fp16_param_to_rank[tensor]

    def belongs_to_current_rank(self, tensor) -> bool:
        tensor_rank = self._fp16_param_to_rank[tensor]
        return tensor_rank == self._local_rank

    def set_param_reduction_state(self, tensor, state):
        self._is_param_reduced[tensor] = state
