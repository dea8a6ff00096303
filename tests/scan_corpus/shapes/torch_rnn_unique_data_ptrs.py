class RNNBase:
    def flatten_parameters(self):
        unique_ptrs = {p.data_ptr() for p in self._flat_weights}  # corpus: sink
        if len(unique_ptrs) != len(self._flat_weights):
            return
        self._flatten()
