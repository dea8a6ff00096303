import functools


def stateful_branch(branch_fun):
    @functools.wraps(branch_fun)
    def new_branch_fun(operand):
        state, operand = operand
        return branch_fun(operand), state
    return new_branch_fun


def _memoize_by_id(f):
    """Memoizes the result of a higher order function on input function id."""
    cache = {}

    @functools.wraps(f)
    def wrapper(g):
        i = id(g)
        try:
            res = cache[i]  # corpus: sink
        except KeyError:
            res = cache[i] = f(g)
        return res
    return wrapper


def switch(index, branches, operand, lax_switch):
    stateful_branch_mem = _memoize_by_id(stateful_branch)
    state = {}
    out, state = lax_switch(
        index, tuple(map(stateful_branch_mem, branches)), (state, operand))
    return out


def cond(pred, true_fun, false_fun, operand, lax_cond):
    stateful_branch_mem = _memoize_by_id(stateful_branch)
    state = {}
    out, state = lax_cond(pred,
                          true_fun=stateful_branch_mem(true_fun),
                          false_fun=stateful_branch_mem(false_fun),
                          operand=(state, operand))
    return out
