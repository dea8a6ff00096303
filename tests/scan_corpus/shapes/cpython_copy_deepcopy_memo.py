_deepcopy_dispatch = {}


def deepcopy(x, memo=None):
    cls = type(x)
    d = id(x)
    if memo is None:
        memo = {}
    else:
        y = memo.get(d, None)
        if y is not None:
            return y

    copier = _deepcopy_dispatch.get(cls)
    if copier is not None:
        y = copier(x, memo)
    else:
        copier = getattr(x, "__deepcopy__", None)
        if copier is not None:
            y = copier(memo)
        else:
            y = x

    # If is its own copy, don't memoize.
    if y is not x:
        memo[d] = y  # corpus: sink
        _keep_alive(x, memo)  # Make sure x lives at least as long as d
    return y


def _keep_alive(x, memo):
    """Keeps a reference to the object x in the memo."""
    try:
        memo[id(memo)].append(x)
    except KeyError:
        # aha, this is the first one :-)
        memo[id(memo)] = [x]
