from collections import defaultdict


class ModuleTracer:
    def __init__(self, root):
        self.module_id_cache = defaultdict(list)
        for name, mod in root.named_modules(remove_duplicate=False):
            self.module_id_cache[id(mod)].append(name)  # corpus: sink

    def path_of(self, mod):
        return self.module_id_cache[id(mod)][0]
