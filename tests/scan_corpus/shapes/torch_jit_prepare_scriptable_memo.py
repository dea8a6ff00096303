def prepare(obj, memo):
    obj_id = id(obj)
    if obj_id in memo:  # corpus: sink
        return memo[id(obj)]
    obj = obj.prepare() if hasattr(obj, "prepare") else obj
    memo[obj_id] = obj
    for name, child in vars(obj).items():
        setattr(obj, name, prepare(child, memo))
    return obj
