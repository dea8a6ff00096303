# expect: ARH001 L0
# Keyed by id(module) and holding only the hook's handle, not the module: a module freed
# without detach leaves its entry, and a new module at the same address pops the old handle.
class HookRegistry:
    def __init__(self):
        self._hooks = {}

    def attach(self, module, hook):
        self._hooks[id(module)] = module.register_forward_hook(hook)

    def detach(self, module):
        self._hooks.pop(id(module)).remove()
