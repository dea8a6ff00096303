def build(const_args, avals, values, lower):
    const_lowering = {(id(c), aval): v for c, aval, v in zip(const_args, avals, values)}
    return [ir_constant(c, const_lowering=const_lowering, aval=a) for c, a in zip(const_args, avals)]


def ir_constant(val, *, const_lowering=None, aval=None):
    if const_lowering is not None:
        hit = const_lowering.get((id(val), aval))  # corpus: sink
        if hit is not None:
            return hit
    return ("constant", val)
