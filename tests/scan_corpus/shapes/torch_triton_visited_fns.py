def find_kernels(fn, depth=0, visited_fns=None):
    if visited_fns is None:
        visited_fns = set()
    fn_id = id(fn)
    if fn_id in visited_fns:  # corpus: sink
        return []
    visited_fns.add(fn_id)
    found = []
    for callee in getattr(fn, "callees", []):
        found += find_kernels(callee, depth + 1, visited_fns)
    return found
