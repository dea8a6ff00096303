import io
import types
from _pickle import Pickler


def dumps(obj, protocol=None):
    with io.BytesIO() as file:
        cp = CloudPickler(file, protocol=protocol)
        cp.dump(obj)
        return file.getvalue()


def _function_getnewargs(func, globals_ref):
    code = func.__code__
    base_globals = globals_ref.setdefault(id(func.__globals__), {})  # corpus: sink
    if base_globals == {}:
        for k in ["__package__", "__name__", "__path__", "__file__"]:
            if func.__globals__ is not None and k in func.__globals__:
                base_globals[k] = func.__globals__[k]
    return code, base_globals, None, None, None


def _dynamic_function_reduce(func, globals_ref):
    newargs = _function_getnewargs(func, globals_ref)
    return types.FunctionType, newargs


def _function_reduce(obj, globals_ref):
    return _dynamic_function_reduce(obj, globals_ref=globals_ref)


def _reduce_global(pickler, obj):
    if isinstance(obj, types.FunctionType):
        return _function_reduce(obj, pickler.globals_ref)
    return NotImplemented


class CloudPickler(Pickler):
    def __init__(self, file, protocol=None):
        Pickler.__init__(self, file, protocol=protocol)
        # map functions __globals__ attribute ids
        self.globals_ref = {}
        self.reducer_override = _reduce_global
