# expect: none
class HookRegistry:
    def __init__(self):
        self._hooks = {}

    def attach(self, module, hook):
        self._hooks[id(module)] = module.register_forward_hook(hook)

    def detach(self, module):
        self._hooks.pop(id(module)).remove()
