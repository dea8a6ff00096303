class FunctionIdSet:
    def __init__(self, init):
        self.init = init
        self.ids = None

    def __call__(self):
        if self.ids is None:
            self.ids = set(self.init())
        return self.ids

    def add(self, idx):
        self().add(idx)

    def remove(self, idx):
        self().discard(idx)

    def __contains__(self, idx):
        return idx in self()


@FunctionIdSet
def _allowed_callable_ids():
    return {}


@FunctionIdSet
def _disallowed_callable_ids():
    return {}


def is_allowed(obj):
    return id(obj) in _allowed_callable_ids
