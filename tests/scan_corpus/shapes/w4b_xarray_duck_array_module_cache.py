from importlib import import_module


class DuckArrayModule:
    def __init__(self, mod):
        try:
            duck_array_module = import_module(mod)
        except ImportError:
            duck_array_module = None
        self.module = duck_array_module
        self.available = duck_array_module is not None


_cached_duck_array_modules = {}


def _get_cached_duck_array_module(mod):
    # mod is a module NAME such as "dask" or "cupy"
    if mod not in _cached_duck_array_modules:
        duckmod = DuckArrayModule(mod)
        _cached_duck_array_modules[mod] = duckmod  # corpus: sink
        return duckmod
    else:
        return _cached_duck_array_modules[mod]


def array_type(mod):
    return _get_cached_duck_array_module(mod).module
