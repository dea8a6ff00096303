class ReturnValueHandler:
    def __init__(self, lazy_args, get_tensor_id):
        ids = [get_tensor_id(a) for a in lazy_args]
        self.tensor_id_to_arg_idx = {tid: i for i, tid in enumerate(ids)}

    def index_of(self, tensor_id):
        return self.tensor_id_to_arg_idx.get(tensor_id, None)  # corpus: sink
