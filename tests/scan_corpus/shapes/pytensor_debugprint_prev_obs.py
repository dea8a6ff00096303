def debugprint(obj, prev_obs=None, tags=None):
    if prev_obs is None:
        prev_obs = {}
    if tags is None:
        tags = iter(range(1 << 30))
    if id(obj) in prev_obs:
        return f"<{prev_obs[id(obj)]}>"
    tag = next(tags)
    prev_obs[id(obj)] = tag  # corpus: sink
    return "".join(debugprint(i, prev_obs, tags) for i in getattr(obj, "inputs", []))
