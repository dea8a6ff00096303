class Accesses:
    def __init__(self):
        self.accesses = {}

    def create(self, data_ptr, trace):
        self.accesses[data_ptr] = trace  # corpus: sink

    def delete(self, data_ptr):
        del self.accesses[data_ptr]


class Handler:
    def __init__(self):
        self.tracked = Accesses()

    def on_alloc(self, data_ptr):
        self.tracked.create(data_ptr, None)

    def on_free(self, data_ptr):
        self.tracked.delete(data_ptr)
