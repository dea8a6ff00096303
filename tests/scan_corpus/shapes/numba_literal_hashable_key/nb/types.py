import weakref

from .utils import get_hashable_key

_typecache = {}


class Type:
    @property
    def key(self):
        return self._key

    def __hash__(self):
        return hash(self.key)

    def __eq__(self, other):
        return type(self) is type(other) and self.key == other.key


def intern(inst):
    wr = weakref.ref(inst)
    orig = _typecache.get(wr)  # corpus: sink
    if orig is not None and orig() is not None:
        return orig()
    _typecache[wr] = wr
    return inst


class Literal(Type):
    def __init__(self, value):
        self._literal_value = value
        self._key = get_hashable_key(value)
