# optimum/fx/parallelization/passes.py: ParallelLayerReplacePass.handle_embedding
from core import ParallelExecutionCtx


class VocabParallelEmbedding:
    def __init__(self, ctx, embedding):
        # keeps embedding.weight, not the embedding module itself
        self.process_group = ctx.tp_group
        self.weight = embedding.weight


class ParallelLayerReplacePass:
    @staticmethod
    def handle_embedding(node, ctx: ParallelExecutionCtx) -> None:
        graph_module = node.graph.owning_module
        prefix_and_field = node.target.rsplit(".", maxsplit=1)
        parent_mod = graph_module.get_submodule(prefix_and_field[0])
        field = prefix_and_field[1]
        mod = graph_module.get_submodule(node.target)
        key, layer_cache = id(mod), ctx.parallel_layer_cache
        if key in layer_cache:  # corpus: sink
            new_mod = layer_cache[key]  # corpus: sink
        else:
            new_mod = VocabParallelEmbedding(ctx, mod)
            layer_cache[key] = new_mod  # corpus: sink
        setattr(parent_mod, field, new_mod)
