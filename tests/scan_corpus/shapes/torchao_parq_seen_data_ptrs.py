# torchao/prototype/parq/api.py
def create_param_groups_and_group_quantizer_map(model, quant_configs_and_filter_fns):
    param_groups = [{"params": []} for _ in quant_configs_and_filter_fns]
    param_groups.append({"params": [], "weight_decay": 0.0})

    seen_data_ptrs = {}
    for param_name, param in model.named_parameters():
        module_name, _, param_basename = param_name.rpartition(".")
        owning_module = model.get_submodule(module_name) if module_name else model

        data_ptr = param.data_ptr()
        if data_ptr in seen_data_ptrs:  # corpus: sink
            print(f"Not considering {param}, shares a data_ptr with {seen_data_ptrs[data_ptr]}")
            continue
        seen_data_ptrs[data_ptr] = param_name

        matching_config = None
        for idx, (config, filter_fn) in enumerate(quant_configs_and_filter_fns):
            if filter_fn(owning_module, param_name):
                param_groups[idx]["params"].append(param)
                matching_config = config
        if matching_config is None:
            param_groups[-1]["params"].append(param)

    param_groups = [pg for pg in param_groups if len(pg["params"]) > 0]
    return param_groups
