def filter_forwarded(outs, ins):
    idxs = {id(x): i for i, x in enumerate(ins)}
    return [o for o in outs if id(o) not in idxs], [idxs.get(id(o)) for o in outs]  # corpus: sink
