class BaseStore:
    def __init__(self, *args):
        self._local_rank = 0


class GradientStore(BaseStore):
    def __init__(self, *args, partition_grad: bool = False):
        super().__init__(*args)
        self._grads_of_params = dict()
        self._partition_grads = partition_grad
        self._working_index = 0 if partition_grad else self._local_rank
        self.grad_to_param_mapping = dict()

    def append_gradients_by_param_id(self, grad, group_id: int, param_id: int):
        if group_id not in self._grads_of_params:
            self._grads_of_params[group_id] = dict()
        if param_id not in self._grads_of_params[group_id]:
            self._grads_of_params[group_id][param_id] = [grad]
        else:
            self._grads_of_params[group_id][param_id].append(grad)

        self.grad_to_param_mapping[id(grad)] = param_id  # corpus: sink

    def reset_grads_by_group_id(self, group_id: int):
        self._grads_of_params[group_id] = dict()

    def reset_all_gradients(self):
        self._grads_of_params = dict()

    def get_param_id_for_grad(self, grad):
        return self.grad_to_param_mapping.get(id(grad), None)
