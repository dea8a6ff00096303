def stage_tensor(x, memo, copy_storage):
    y = x.new_empty(x.size(), device="cpu")
    memo[id(x)] = y
    storage_id = id(x.untyped_storage())  # corpus: sink
    if storage_id in memo:
        return memo[storage_id]
    memo[storage_id] = copy_storage(x.untyped_storage())
    return y
