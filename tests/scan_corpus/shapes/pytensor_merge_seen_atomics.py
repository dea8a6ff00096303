class MergeFeature:
    def on_attach(self, fgraph):
        fgraph.merge_feature = self
        self.seen_atomics = set()
        self.sig_inv = {}

    def process_atomic(self, fgraph, c):
        if id(c) in self.seen_atomics:
            return
        sig = c.signature()
        if sig in self.sig_inv:
            return
        self.sig_inv[sig] = c
        self.seen_atomics.add(id(c))  # corpus: sink
