class SymNodeIndex:
    def __init__(self):
        self.sym_node_lookup = {}

    def convert_input(self, result, arg):
        node_id = id(arg.node)
        if node_id in self.sym_node_lookup:  # corpus: sink
            result.append(("backref", self.sym_node_lookup[node_id]))
        else:
            self.sym_node_lookup[node_id] = len(result)
            result.append(("input", arg))

    def convert_output(self, arg):
        return ("output", self.sym_node_lookup.get(id(arg.node), None))
