# trio/_core/_ki.py: module-global identity-keyed map; key is a weakref hashed by object.__hash__ (address),
# with a callback that deletes the entry when the code object dies
import types
import weakref

class _IdRef(weakref.ref):
    __slots__ = ("_hash",)
    def __new__(cls, ob, callback=None, /):
        self = weakref.ref.__new__(cls, ob, callback)
        self._hash = object.__hash__(ob)
        return self
    def __eq__(self, other):
        if self is other:
            return True
        if not isinstance(other, _IdRef):
            return NotImplemented
        my_obj = self()
        other_obj = other()
        return my_obj is not None and other_obj is not None and my_obj is other_obj
    def __hash__(self):
        return self._hash

class WeakKeyIdentityDictionary:
    def __init__(self):
        self._data = {}
        def remove(k, selfref=weakref.ref(self)):
            self = selfref()
            if self is not None:
                try:
                    del self._data[k]
                except KeyError:
                    pass
        self._remove = remove
    def __getitem__(self, k):
        return self._data[_IdRef(k)]
    def __setitem__(self, k, v):
        self._data[_IdRef(k, self._remove)] = v  # corpus: sink
_CODE_KI_PROTECTION_STATUS_WMAP = WeakKeyIdentityDictionary()

def enable_ki_protection(f):
    code = f.__code__.replace()
    _CODE_KI_PROTECTION_STATUS_WMAP[code] = True
    f.__code__ = code
    return f
