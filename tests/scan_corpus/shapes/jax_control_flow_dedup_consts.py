def dedup(consts):
    seen = set()
    return [c for c in consts if id(c) not in seen and not seen.add(id(c))]  # corpus: sink
