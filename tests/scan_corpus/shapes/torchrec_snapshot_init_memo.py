def snapshot(value, memo=None):
    if memo is None:
        memo = {}
    value_id = id(value)
    if value_id in memo:
        return memo[value_id]
    if isinstance(value, dict):
        out = {}
        memo[value_id] = out  # corpus: sink
        out.update({k: snapshot(v, memo) for k, v in value.items()})
        return out
    return value
