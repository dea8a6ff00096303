def match_params(traced, original):
    by_id = {}
    for name, param in traced.named_parameters(remove_duplicate=False):
        by_id[id(param)] = (name, param)  # corpus: sink
    out = {}
    for name, param in original.named_parameters():
        if id(param) in by_id:
            out[name] = by_id[id(param)][0]
    return out
