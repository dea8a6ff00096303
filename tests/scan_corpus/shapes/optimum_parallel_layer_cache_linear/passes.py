# optimum/fx/parallelization/passes.py: ParallelLayerReplacePass.handle_linear
from core import ParallelExecutionCtx


class ColumnParallelLinear:
    def __init__(self, ctx, linear, gather_output=True):
        # keeps linear.weight / linear.bias, not the linear module itself
        self.process_group = ctx.tp_group
        self.weight = linear.weight
        self.bias = linear.bias
        self.gather_output = gather_output


class ParallelLayerReplacePass:
    @staticmethod
    def handle_linear(node, ctx: ParallelExecutionCtx) -> None:
        graph_module = node.graph.owning_module
        prefix_and_field = node.target.rsplit(".", maxsplit=1)
        parent_mod = graph_module.get_submodule(prefix_and_field[0])
        field = prefix_and_field[1]
        mod = graph_module.get_submodule(node.target)
        key, layer_cache = id(mod), ctx.parallel_layer_cache
        if key in layer_cache:  # corpus: sink
            new_mod = layer_cache[key]  # corpus: sink
        else:
            new_mod = ColumnParallelLinear(ctx, mod, False)
            layer_cache[key] = new_mod  # corpus: sink
        # the original module is replaced, nothing keeps it alive
        setattr(parent_mod, field, new_mod)
