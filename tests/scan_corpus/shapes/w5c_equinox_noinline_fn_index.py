import jax.tree_util as jtu


def hashable_partition(pytree, filter_fn):
    leaves, treedef = jtu.tree_flatten(pytree)
    dynamic_leaves = tuple(x if filter_fn(x) else None for x in leaves)
    static_leaves = tuple(None if filter_fn(x) else x for x in leaves)
    return dynamic_leaves, (static_leaves, treedef)


def is_array(x):
    return hasattr(x, "shape")


_fn_to_index = {}
_index_to_fn = []


def _noinline_impl(dynamic_index, transforms, args):
    static_fn = _index_to_fn[dynamic_index.item()]
    for transform in transforms:
        static_fn = transform(static_fn)
    return static_fn(args)


def noinline(fn, abstract_fn=None):
    dynamic_fn, static_fn = hashable_partition(fn, is_array)
    try:
        dynamic_index = _fn_to_index[static_fn]  # corpus: sink
    except KeyError:
        dynamic_index = len(_index_to_fn)
        _fn_to_index[static_fn] = dynamic_index
        _index_to_fn.append(static_fn)
    return dynamic_index, abstract_fn, dynamic_fn
