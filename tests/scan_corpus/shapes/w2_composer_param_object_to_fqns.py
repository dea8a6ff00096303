def _get_param_tying_groups(model):
    # Map parameter object to the set of FQNs associated with it
    param_object_to_fqns = {}

    def _recursive_get_params(module, prefix=''):
        for name, param in module.named_parameters(recurse=False):
            fqn = f'{prefix}.{name}' if prefix else name
            if param not in param_object_to_fqns:
                param_object_to_fqns[param] = set()  # corpus: sink
            param_object_to_fqns[param].add(fqn)

        for child_name, child in module.named_children():
            child_prefix = f'{prefix}.{child_name}' if prefix else child_name
            _recursive_get_params(child, child_prefix)

    _recursive_get_params(model)

    return list(param_object_to_fqns.values())
