def _check_tensor_need_materialization(tensors):
    return [True for _ in tensors]


def extract_graph_helper(xla_model, xla_args_tensor_only):
    index_and_xla_tensor_args = [
        (i, xla_arg) for i, xla_arg in enumerate(xla_args_tensor_only)
    ]
    xla_out = xla_model(*xla_args_tensor_only)
    if not isinstance(xla_out, (tuple, list)):
        xla_out = (xla_out,)

    # local set built and dropped in this call; xla_out stays alive while it is used
    xla_out_ids = {id(x) for x in xla_out}

    xla_args_need_update_bool = _check_tensor_need_materialization(
        [tensor for _, tensor in index_and_xla_tensor_args])
    xla_args_need_update = []
    arg_index_to_need_update_index = {}
    for i, need_update in enumerate(xla_args_need_update_bool):
        index, tensor = index_and_xla_tensor_args[i]
        if need_update and id(tensor) not in xla_out_ids:  # corpus: sink
            arg_index_to_need_update_index[index] = len(xla_args_need_update)
            xla_args_need_update.append(tensor)
    args_and_out = tuple(xla_args_need_update) + tuple(xla_out)
    return args_and_out, arg_index_to_need_update_index
