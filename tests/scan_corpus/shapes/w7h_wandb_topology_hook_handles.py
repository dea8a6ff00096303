# wandb/integration/torch/wandb_torch.py: run-lifetime dict of hook handles keyed by str(id(handle)); value pins the handle.
class TorchHistory:
    def __init__(self):
        self._hook_handles = {}

    def unhook(self, name):
        handle = self._hook_handles.pop(name)
        handle.remove()


class _Run:
    def __init__(self):
        self._torch = TorchHistory()


class _Wandb:
    run = _Run()


wandb = _Wandb()


class TorchGraph:
    def __init__(self):
        self._graph_hooks = set()

    def create_forward_hook(self, name, graph_idx):
        def after_forward_hook(module, input, output):
            return None
        return after_forward_hook

    def hook_torch_modules(self, module, parent=None):
        for name, sub_module in module.named_children():
            if parent is None:
                parent = module
            self._graph_hooks |= {id(sub_module)}
            graph_hook = sub_module.register_forward_hook(
                self.create_forward_hook(name, 0)
            )
            wandb.run._torch._hook_handles[
                "topology/" + str(id(graph_hook))
            ] = graph_hook  # corpus: sink
            if not hasattr(parent, "_wandb_hook_names"):
                parent._wandb_hook_names = []
            parent._wandb_hook_names.append("topology/" + str(id(graph_hook)))
