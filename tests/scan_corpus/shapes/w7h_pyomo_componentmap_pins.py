# pyomo/common/collections/component_map.py: ComponentMap._dict maps id(obj) -> (obj, val);
# the tuple value holds the key object, so its id cannot be reused while the entry exists.
from collections.abc import MutableMapping


class ComponentMap(MutableMapping):
    __slots__ = ("_dict",)

    def __init__(self, *args, **kwds):
        # maps id(obj) -> (obj,val)
        self._dict = {}
        self.update(*args, **kwds)

    def __setstate__(self, state):
        self._dict = {id(obj): (obj, val) for obj, val in state['_dict'].values()}

    def __getitem__(self, obj):
        return self._dict[id(obj)][1]

    def __setitem__(self, obj, val):
        self._dict[id(obj)] = (obj, val)  # corpus: sink

    def __delitem__(self, obj):
        del self._dict[id(obj)]

    def __iter__(self):
        return (obj for obj, val in self._dict.values())

    def __len__(self):
        return self._dict.__len__()

    def __contains__(self, obj):
        return id(obj) in self._dict
