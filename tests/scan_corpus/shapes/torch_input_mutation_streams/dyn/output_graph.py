class OutputGraph:
    def __init__(self):
        self._input_mutation_streams = {}

    def check_input_mutations(self, tx, mutated_inputs):
        cur_stream_index = tx.symbolic_stream_state.cur_stream_id()
        for idx in mutated_inputs:
            if cur_stream_index not in self._input_mutation_streams:  # corpus: sink
                self._input_mutation_streams[cur_stream_index] = set()
            self._input_mutation_streams[cur_stream_index].add(idx)
