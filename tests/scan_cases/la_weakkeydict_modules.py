# expect: none
import weakref

_compiled = weakref.WeakKeyDictionary()


def compiled(module, compile_fn):
    if module not in _compiled:
        _compiled[module] = compile_fn(module)
    return _compiled[module]
