class BaseStore:
    def __init__(self, torch_pg):
        self._world_size = 2


class BucketStore(BaseStore):
    def __init__(self, torch_pg, reduce_bucket_size: int):
        super().__init__(torch_pg)
        self.reduce_bucket_size = reduce_bucket_size
        self.reset_all()

    def reset_all(self) -> None:
        self.grad_to_param_mapping = dict()
        self._grad_in_bucket = dict()
        self._param_list = []
        self._padding_size = []
        for rank in range(self._world_size):
            self._grad_in_bucket[rank] = []
        self.offset_list = [0]

    def add_param_grad(self, group_id: int, param, padding_size: int):
        self._param_list.append(param)
        self._padding_size.append(padding_size)
        self.offset_list[-1] += 1

    def build_grad_in_bucket(self):
        for param, padding_size in zip(self._param_list, self._padding_size):
            grad = param.grad.clone().detach().flatten()
            grad_list = grad.split(grad.numel() // self._world_size)
            for rank in range(self._world_size):
                grad_current_rank = grad_list[rank].clone().detach()
                self.grad_to_param_mapping[id(grad_current_rank)] = id(param)  # corpus: sink
                self._grad_in_bucket[rank].append(grad_current_rank)
            param.grad = None
        self.offset_list.append(0)

    def get_param_id_of_grad(self, grad) -> int:
        return self.grad_to_param_mapping[id(grad)]

    def reset(self):
        cur_offset = self.offset_list.pop(0)
        self._param_list = self._param_list[cur_offset:]
        self._padding_size = self._padding_size[cur_offset:]
        for _ in range(cur_offset):
            del self.grad_to_param_mapping[next(iter(self.grad_to_param_mapping))]
        for rank in range(self._world_size):
            self._grad_in_bucket[rank] = self._grad_in_bucket[rank][cur_offset:]
