class GuardBuilder:
    def __init__(self, get):
        self.get = get
        self.guard_tree_values = {}
        self._cached = {}

    def manager_for(self, source_name, source):
        if source_name in self._cached:
            return self._cached[source_name]
        example_value = self.get(source)
        self.guard_tree_values[id(example_value)] = example_value  # corpus: sink
        return example_value
