class FunctionIdSet:
    def __init__(self, init):
        self.init = init
        self.function_ids = None
        self.function_names = None

    def __call__(self):
        if self.function_ids is None:
            value = self.init()
            self.function_ids = set(value)
            self.function_names = value
        return self.function_ids

    def get_name(self, idx, default):
        self()
        return self.function_names.get(idx, default)  # corpus: sink


@FunctionIdSet
def _disallowed_callable_ids():
    return {}


def get_skip_reason(obj):
    return _disallowed_callable_ids.get_name(id(obj), repr(obj))
