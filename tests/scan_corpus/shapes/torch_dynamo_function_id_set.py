class IdSet:
    def __init__(self, init):
        self.init = init
        self.ids = None

    def __call__(self):
        if self.ids is None:
            self.ids = set(self.init().keys())
        return self.ids

    def __contains__(self, idx):
        return idx in self()


@IdSet
def numpy_function_ids():
    rv = {}
    for mod in MODULES:
        for name, v in mod.__dict__.items():
            rv[id(v)] = f"{mod.__name__}.{name}"  # corpus: sink
    return rv


def is_numpy_function(obj):
    return id(obj) in numpy_function_ids


MODULES = []
