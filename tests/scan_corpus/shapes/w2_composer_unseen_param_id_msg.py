def update_optimizer_modules(optimizer, model, orig_param_to_name):
    if optimizer.state:
        optimizer.state.clear()

    name_to_sharded_param = dict(model.named_parameters(recurse=True))

    old_to_new_param = {}
    unseen_params = set()
    for group in optimizer.param_groups:
        for param in group['params']:
            param_name = orig_param_to_name.get(param, None)
            if param_name is None:
                # we don't have a way to identify the parameter name, we just use the id
                unseen_params.add(f'optimizer.param_id.{id(param)}')  # corpus: sink
            elif param_name not in name_to_sharded_param:
                unseen_params.add(f'model.param_name.{param_name}')
            else:
                old_to_new_param[param] = name_to_sharded_param[param_name]

    if len(unseen_params) > 0:
        raise ValueError(
            f'following parameters were not found in the sharded model: {list(unseen_params)}.'
        )

    new_param_groups = []
    for group in optimizer.param_groups:
        new_group = {k: v for k, v in group.items() if k != 'params'}
        new_group['params'] = [old_to_new_param[param] for param in group['params']]
        new_param_groups.append(new_group)
    optimizer.param_groups.clear()
    for group in new_param_groups:
        optimizer.add_param_group(group)
