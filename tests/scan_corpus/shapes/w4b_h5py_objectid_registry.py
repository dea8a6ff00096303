import weakref

# Will map id(obj) -> weakref(obj), where obj is an ObjectID instance.
# Objects are added only via ObjectID.__cinit__, and removed only by
# ObjectID.__dealloc__.
registry = {}


def nonlocal_close():
    for python_id in list(registry):
        ref = registry.get(python_id)
        if ref is None:
            continue
        obj = ref()
        if obj is None:
            continue
        obj.id = 0


class ObjectID(object):
    # Cython __cinit__ / __dealloc__ restated as __init__ / __del__

    def __init__(self, id_):
        self.id = id_
        self.locked = 0
        self._pyid = id(self)
        registry[self._pyid] = weakref.ref(self)  # corpus: sink

    def __del__(self):
        if self._pyid is not None:
            del registry[self._pyid]
