def tuptree_map(f, tree):
    return tuple(tuptree_map(f, t) if isinstance(t, tuple) else f(t) for t in tree)


def prune_residuals(primals, residuals, args):
    id_map = {id(x): i for i, x in enumerate(primals)}
    used = set()
    spec = [used.add(id(r)) or id_map[id(r)] if id(r) in id_map else None for r in residuals]
    kept = tuptree_map(lambda x: x if id(x) in used else None, args)  # corpus: sink
    return spec, kept
