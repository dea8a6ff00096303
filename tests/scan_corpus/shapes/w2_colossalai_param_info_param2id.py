class OptimizerWrapper:
    def __init__(self, optim):
        self.optim = optim


def get_param_info(optim):
    if optim is None:
        return {}
    param_info = {"param_groups": [], "param2id": {}, "id2param": {}, "param2shape": {}}
    start_index = 0
    for group in optim.param_groups:
        packed_group = {k: v for k, v in group.items() if k != "params"}
        packed_group["params"] = []
        for param_id, param in enumerate(group["params"], start_index):
            original_shape = param.shape
            packed_group["params"].append(param_id)
            param_info["param2id"][id(param)] = param_id  # corpus: sink
            param_info["id2param"][param_id] = id(param)
            param_info["param2shape"][id(param)] = original_shape
        param_info["param_groups"].append(packed_group)
        start_index += len(group["params"])
    return param_info


def reinitialize_optimizer(optim, model):
    model_params = set(model.parameters())
    new_param_groups = []
    for group in optim.param_groups:
        params = [p for p in group["params"] if p in model_params]
        new_param_groups.append({**group, "params": params})
    optim.__setstate__({"param_groups": new_param_groups})


class HybridParallelNaiveOptimizer(OptimizerWrapper):
    def __init__(self, optim, model, use_pipeline: bool, param_info):
        self.param_info = param_info
        if use_pipeline:
            reinitialize_optimizer(optim, model)
        self.model = model
        super().__init__(optim)

