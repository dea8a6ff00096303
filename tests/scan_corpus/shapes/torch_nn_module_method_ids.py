import functools


class UnspecializedModule:
    @staticmethod
    @functools.cache
    def _method_ids():
        supported = {object.__setattr__, object.__init__}
        return {id(x.__code__) for x in vars(object).values()
                if hasattr(x, "__code__") and x not in supported}

    def call_method(self, method):
        if hasattr(method, "__code__") and id(method.__code__) in self._method_ids():  # corpus: sink
            raise NotImplementedError("unsupported method")
        return method()
