# funsor/terms.py: cons-hashing of funsor terms in FunsorMeta / reflect
from collections.abc import Hashable
from weakref import WeakValueDictionary


def _alpha_mangle(expr):
    return expr


def reflect(cls, *args, **kwargs):
    cache_key = tuple(id(arg) if not isinstance(arg, Hashable) else arg for arg in args)
    if cache_key in cls._cons_cache:  # corpus: sink
        return cls._cons_cache[cache_key]  # corpus: sink

    result = super(FunsorMeta, cls).__call__(*args)
    result._ast_values = args

    result = _alpha_mangle(result)

    cls._cons_cache[cache_key] = result  # corpus: sink
    return result


class FunsorMeta(type):
    def __init__(cls, name, bases, dct):
        super(FunsorMeta, cls).__init__(name, bases, dct)
        cls._cons_cache = WeakValueDictionary()
        cls._type_cache = WeakValueDictionary()

    def __call__(cls, *args):
        return reflect(cls, *args)


class Funsor(object, metaclass=FunsorMeta):
    def __init__(self, inputs, output):
        self.inputs = inputs
        self.output = output

    def __hash__(self):
        return id(self)
