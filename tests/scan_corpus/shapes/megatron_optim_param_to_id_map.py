from typing import Dict, Iterable


def to_local_if_dtensor(tensor):
    return tensor


def nested_values(d):
    return d.values()


def get_optim_param_to_id_map(optim_params_iter: Iterable) -> Dict[int, int]:
    param_mappings = {}
    for i, param in enumerate(optim_params_iter):
        param = to_local_if_dtensor(param)
        if id(param) not in param_mappings:
            param_mappings[id(param)] = i  # corpus: sink
    return param_mappings


def get_param_id_to_sharded_param_map(model_sharded_state_dict, optim_params_iter):
    # the id-keyed dict lives only for this call; the params it was built from
    # are the live optimizer parameters, and only int indices leave this function
    id_to_sharded_param_map = {}
    param_to_id_map = get_optim_param_to_id_map(optim_params_iter)
    for ten in nested_values(model_sharded_state_dict):
        if id(ten.data) in param_to_id_map:
            id_to_sharded_param_map[param_to_id_map[id(ten.data)]] = ten
    return id_to_sharded_param_map
