def visit(fn, value, cache=None):
    if cache is None:
        cache = {}
    idx = id(value)
    if idx in cache:  # corpus: sink
        return
    cache[idx] = value
    fn(value)
    for child in getattr(value, "children", []):
        visit(fn, child, cache)
