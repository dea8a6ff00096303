import functools
import weakref


class CheckFunctionManager:
    def __init__(self):
        self._weakrefs = {}

    def invalidate(self, obj_str):
        self._weakrefs.clear()

    def id_ref(self, obj, obj_str):
        try:
            if id(obj) not in self._weakrefs:
                self._weakrefs[id(obj)] = weakref.ref(obj)  # corpus: sink
                weakref.finalize(obj, functools.partial(self.invalidate, obj_str=obj_str))
        except TypeError:
            pass
        return id(obj)

    def lookup_weakrefs(self, obj):
        return self._weakrefs.get(id(obj))
