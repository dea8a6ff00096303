def to_jaxpr(recipes, newvar):
    constid_to_var = {}
    consts = {}
    for r in recipes:
        var = constid_to_var.get(id(r.val))  # corpus: sink
        if var is None:
            var = constid_to_var[id(r.val)] = newvar()
            consts[var] = r.val
    return consts
