def make_dot(var, params=None):
    if params is not None:
        # params (name -> tensor), owned by the caller, keeps every keyed tensor alive
        param_map = {id(v): k for k, v in params.items()}
    else:
        param_map = {}

    dot = []
    seen = set()

    def get_var_name(var, name=None):
        if not name:
            name = param_map[id(var)] if id(var) in param_map else ''  # corpus: sink
        return '%s\n %s' % (name, tuple(var.size()))

    def add_nodes(fn):
        if fn in seen:
            return
        seen.add(fn)
        if hasattr(fn, 'variable'):
            var = fn.variable
            seen.add(var)
            dot.append((str(id(var)), get_var_name(var)))
        if hasattr(fn, 'next_functions'):
            for u in fn.next_functions:
                if u[0] is not None:
                    add_nodes(u[0])

    def add_base_tensor(var):
        if var in seen:
            return
        seen.add(var)
        dot.append((str(id(var)), get_var_name(var)))
        if var.grad_fn:
            add_nodes(var.grad_fn)

    add_base_tensor(var)
    return dot
