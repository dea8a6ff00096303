import torch.utils._pytree as pytree


def convert_modules_to_states(values, module_to_index):
    def module_to_state(val):
        if hasattr(val, "named_parameters"):
            return ("leaf_module", module_to_index[id(val)])  # corpus: sink
        return val

    return pytree.tree_map(module_to_state, values)


def capture(args, modules, store):
    seen = {}
    for m in modules:
        seen.setdefault(id(m), len(seen))
    module_to_index = {mod_id: store(pos) for mod_id, pos in seen.items()}
    return convert_modules_to_states(args, module_to_index)
