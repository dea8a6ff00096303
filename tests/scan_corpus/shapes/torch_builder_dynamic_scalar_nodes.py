class Builder:
    def __init__(self, tx):
        self.tx = tx

    def wrap_dynamic_scalar(self, value, make_symbol):
        nodes = None
        if id(value) in self.tx.output.root_tracer.dynamic_scalar_nodes:
            nodes = self.tx.output.root_tracer.dynamic_scalar_nodes[id(value)]  # corpus: sink
        else:
            nodes = make_symbol(value)
            self.tx.output.root_tracer.dynamic_scalar_nodes[id(value)] = nodes
        return nodes
