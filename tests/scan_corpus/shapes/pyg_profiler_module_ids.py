import functools


class Profiler:
    def __init__(self, model, paths=None):
        self._model = model
        self.paths = paths
        self.traces = ()
        self._ids = set()

    def __enter__(self):
        self._forwards = {}
        self.traces = tuple(map(self._hook_trace, _walk_modules(self._model)))
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        tuple(map(self._remove_hook_trace, self.traces))
        del self._forwards

    def _hook_trace(self, trace):
        [path, leaf, module] = trace
        _id = id(module)
        if (self.paths is None and leaf):
            if _id in self._ids:
                return trace
            self._ids.add(_id)  # corpus: sink
            _forward = module.forward
            self._forwards[path] = _forward

            @functools.wraps(_forward)
            def wrap_forward(*args, **kwargs):
                return _forward(*args, **kwargs)

            module.forward = wrap_forward
        return trace

    def _remove_hook_trace(self, trace):
        [path, leaf, module] = trace
        _id = id(module)
        if _id in self._ids:
            self._ids.discard(_id)
        else:
            return
        module.forward = self._forwards[path]


def _walk_modules(module, name="", path=()):
    path = path + (name,)
    yield (path, True, module)
