def module_key(nodes):
    constant_ids = dict()
    sig = []

    def in_sig(i, pos):
        if hasattr(i, "signature"):
            if id(i) not in constant_ids:
                constant_ids[id(i)] = (i.signature(), pos)  # corpus: sink
            return constant_ids[id(i)]
        return pos

    for pos, node in enumerate(nodes):
        sig.append(tuple(in_sig(i, pos) for i in node.inputs))
    return tuple(sig)
