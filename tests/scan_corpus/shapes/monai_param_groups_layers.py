def param_groups(network, selectors, lrs, include_others=True):
    params, chosen = [], []
    for select, lr in zip(selectors, lrs):
        params.append({"params": select(), "lr": lr})
        chosen.extend([id(x) for x in select()])
    if include_others:
        params.append({"params": filter(lambda p: id(p) not in chosen, network.parameters())})  # corpus: sink
    return params
