import weakref


class Info:
    def __init__(self, tensor):
        storage = tensor.untyped_storage()
        self.ptr = storage.data_ptr()
        self.ref = weakref.ref(storage)


class LivenessTracker:
    def __init__(self):
        self._inputs = {}
        self._outputs = set()

    def track_input(self, tensor):
        ptr = tensor.data_ptr()
        if ptr not in self._outputs and ptr not in self._inputs:
            self._inputs[ptr] = Info(tensor)  # corpus: sink
