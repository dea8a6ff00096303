class SideEffects:
    def __init__(self):
        self.deferred_attr_mutations = {}

    def defer_store(self, item, name, value, read_original):
        key = (id(item), name)
        if key in self.deferred_attr_mutations:  # corpus: sink
            original = self.deferred_attr_mutations[key][0]
        else:
            original = read_original(item, name)
        self.deferred_attr_mutations[key] = (original, value)
