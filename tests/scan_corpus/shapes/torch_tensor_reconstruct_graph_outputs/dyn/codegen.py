class Entry:
    def __init__(self, index, value):
        self.index = index
        self.value = value


class Codegen:
    def __init__(self):
        self.graph_outputs = {}

    def add_graph_output(self, value):
        key = id(value.as_proxy())
        self.graph_outputs.setdefault(key, Entry(len(self.graph_outputs), value))
        return key
