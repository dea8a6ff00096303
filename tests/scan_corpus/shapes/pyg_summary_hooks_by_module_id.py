from collections import defaultdict


def summary(model, *args, max_depth=3, **kwargs):
    def register_hook(info):
        def hook(module, inputs, output):
            info['input_shape'].append(inputs)
            info['output_shape'].append(output)

        return hook

    hooks = {}
    depth = 0
    stack = [(model.__class__.__name__, model, depth)]

    info_list = []
    input_shape = defaultdict(list)
    output_shape = defaultdict(list)
    while stack:
        name, module, depth = stack.pop()
        module_id = id(module)

        if module_id in hooks:  # Avoid duplicated hooks.
            hooks[module_id].remove()

        info = {}
        info['name'] = name
        info['input_shape'] = input_shape[module_id]
        info['output_shape'] = output_shape[module_id]
        info_list.append(info)

        hooks[module_id] = module.register_forward_hook(  # corpus: sink
            register_hook(info))

        if depth >= max_depth:
            continue

        module_items = reversed(module._modules.items())
        stack += [(f"({name}){mod.__class__.__name__}", mod, depth + 1)
                  for name, mod in module_items if mod is not None]

    model(*args, **kwargs)

    for h in hooks.values():  # Remove hooks.
        h.remove()

    return info_list
