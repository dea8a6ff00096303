# expect: ARH001 L0
# The key is built by a callback handed to a tree-map utility.
from torch.utils._pytree import tree_map

_compiled = {}


def run(fn, inputs):
    key = tuple(tree_map(lambda t: t.data_ptr(), inputs))
    if key not in _compiled:
        _compiled[key] = fn
    return _compiled[key](inputs)
