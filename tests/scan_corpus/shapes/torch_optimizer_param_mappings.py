def state_dict(groups):
    mapping: dict[int, int] = {}
    start = 0

    def pack(group):
        nonlocal start
        mapping.update({id(p): i for i, p in enumerate(group["params"], start)
                        if id(p) not in mapping})  # corpus: sink
        packed = [mapping[id(p)] for p in group["params"]]
        start += len(packed)
        return packed

    return [pack(g) for g in groups]
