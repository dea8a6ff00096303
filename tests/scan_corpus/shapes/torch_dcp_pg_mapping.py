def map_groups(loaded_groups, fqn):
    index = {}
    for group in loaded_groups:
        if fqn in group["params"]:
            index[id(group)] = len(index)
    out = []
    for group in loaded_groups:
        out.append(index.get(id(group), -1))  # corpus: sink
    return out
