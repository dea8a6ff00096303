import contextlib


@contextlib.contextmanager
def sync_optimizer_and_model_params(optimizer, model):
    # Build the parameter to name mapping before any modifications
    orig_param_to_name = {p: n for n, p in model.named_parameters(recurse=True)}  # corpus: sink

    yield

    update_optimizer_modules(optimizer, model, orig_param_to_name)


def update_optimizer_modules(optimizer, model, orig_param_to_name):
    name_to_sharded_param = dict(model.named_parameters(recurse=True))
    old_to_new_param = {}
    for group in optimizer.param_groups:
        for param in group['params']:
            param_name = orig_param_to_name.get(param, None)
            if param_name is not None and param_name in name_to_sharded_param:
                old_to_new_param[param] = name_to_sharded_param[param_name]
    new_param_groups = []
    for group in optimizer.param_groups:
        new_group = {k: v for k, v in group.items() if k != 'params'}
        new_group['params'] = [old_to_new_param[param] for param in group['params']]
        new_param_groups.append(new_group)
    optimizer.param_groups.clear()
    for group in new_param_groups:
        optimizer.add_param_group(group)
