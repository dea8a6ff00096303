class LivenessTracker:
    def __init__(self):
        self._inputs = {}
        self._outputs = set()

    def mark_output(self, tensor):
        ptr = tensor.data_ptr()
        if ptr not in self._inputs:
            self._outputs.add(ptr)  # corpus: sink
