def fqn_by_id(module):
    lookup = {}
    for name, param in module.named_parameters(remove_duplicate=False):
        if lookup.get(id(param)) is None:  # corpus: sink
            lookup[id(param)] = name
    return lookup
