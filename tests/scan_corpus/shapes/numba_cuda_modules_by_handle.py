import weakref


class Context:
    def __init__(self):
        self.modules = {}

    def create_module_image(self, image, load):
        module = load(self, image)
        key = module.handle.value
        self.modules[key] = module  # corpus: sink
        return weakref.proxy(module)

    def unload_module(self, module):
        del self.modules[module.handle.value]
