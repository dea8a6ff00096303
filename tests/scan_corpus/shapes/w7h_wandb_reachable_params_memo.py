# wandb/integration/torch/wandb_torch.py: from_torch_layers builds id()-keyed dicts local to one call;
# every keyed module/param is held by module_graph's nodes (n.obj) for the whole call.
class TorchGraph:
    @classmethod
    def from_torch_layers(cls, module_graph, variable, torch):
        module_nodes_by_hash = {id(n): n for n in module_graph.nodes}
        module_parameter_nodes = [
            n for n in module_graph.nodes if isinstance(n.obj, torch.nn.Parameter)
        ]
        names_by_pid = {id(n.obj): n.name for n in module_parameter_nodes}
        reachable_param_nodes = module_graph[0].reachable_descendents()
        module_reachable_params = {}
        names = {}
        for pid, reachable_nodes in reachable_param_nodes.items():
            node = module_nodes_by_hash[pid]
            if not isinstance(node.obj, torch.nn.Module):
                continue
            module = node.obj
            reachable_params = {}
            module_reachable_params[id(module)] = reachable_params  # corpus: sink
            names[node.name] = set()
            for reachable_hash in reachable_nodes:
                reachable = module_nodes_by_hash[reachable_hash]
                if isinstance(reachable.obj, torch.nn.Parameter):
                    param = reachable.obj
                    reachable_params[id(param)] = param
                    names[node.name].add(names_by_pid[id(param)])
        for node in module_graph.nodes:
            if not isinstance(node.obj, torch.nn.Module):
                continue
            module = node.obj
            reachable_params = module_reachable_params[id(module)]
        return names
