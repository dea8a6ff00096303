class TensorVariable:
    def __init__(self, proxy, source=None):
        self.proxy = proxy
        self.source = source

    def reconstruct_pycode(self, codegen):
        if id(self.proxy) in codegen.graph_outputs:  # corpus: sink
            return f"__graph_out[{codegen.graph_outputs[id(self.proxy)].index}]"
        return self.source
