import inspect

_wrapped_fns_to_patch: dict = {}


def wrap(fn_name):
    f = inspect.currentframe().f_back
    if f.f_code.co_name != "<module>":
        raise NotImplementedError("wrap must be called at module level")
    _wrapped_fns_to_patch[(id(f.f_globals), fn_name)] = f.f_globals  # corpus: sink
    return fn_name
