# wandb/integration/torch/wandb_torch.py: TorchGraph.nodes_by_id lives with the graph (kept by hook closures and run summary),
# keyed by id(module)/id(param); the Node value stores only the integer id, never the module or parameter.
class Node:
    def __init__(self, id=None, name=None, class_name=None, parameters=None):
        self.id = id
        self.name = name
        self.class_name = class_name
        self.parameters = parameters


class Graph:
    def __init__(self, format):
        self.format = format
        self.nodes = []
        self.nodes_by_id = {}

    def add_node(self, node):
        self.nodes.append(node)


class TorchGraph(Graph):
    def __init__(self):
        super().__init__("torch")
        self._graph_hooks = set()

    def create_forward_hook(self, name, graph_idx):
        graph = self

        def after_forward_hook(module, input, output):
            if id(module) not in self._graph_hooks:
                return
            parameters = [
                (pname, list(param.size()))
                for pname, param in module.named_parameters()
            ]
            node = Node(
                id=id(module),
                name=name,
                class_name=str(module),
                parameters=parameters,
            )
            graph.nodes_by_id[id(module)] = node  # corpus: sink
            for param in module.parameters():
                graph.nodes_by_id[id(param)] = node  # corpus: sink
            graph.add_node(node)
            self._graph_hooks -= {id(module)}

        return after_forward_hook
