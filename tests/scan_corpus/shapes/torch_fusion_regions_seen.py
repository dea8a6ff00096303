def region_costs(region_of):
    costs = {}
    seen = set()
    for node_set in region_of.values():
        rid = id(node_set)
        if rid in seen:  # corpus: sink
            continue
        seen.add(rid)
        costs[rid] = len(node_set)
    return costs
