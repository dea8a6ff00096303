# expect: ARH001 L0
# A context's table reached through a local alias bound in a tuple assignment, with its key
# (optimum's parallel_layer_cache): the module whose id keys it is replaced and dropped.


class Replacement:
    def __init__(self, linear):
        self.weight = linear.weight  # not the module


def handle_linear(node, ctx):
    mod = node.module
    key, layer_cache = id(mod), ctx.parallel_layer_cache
    if key in layer_cache:
        new_mod = layer_cache[key]
    else:
        new_mod = Replacement(mod)
        layer_cache[key] = new_mod
    node.module = new_mod
