# lib/matplotlib/transforms.py: TransformNode parent registry (child._parents keyed by id of the parent node)
import weakref


class TransformNode:
    def __init__(self, shorthand_name=None):
        self._parents = {}
        self._invalid = 1

    def __getstate__(self):
        return {**self.__dict__,
                '_parents': {k: v() for k, v in self._parents.items()}}

    def __setstate__(self, data_dict):
        self.__dict__ = data_dict
        self._parents = {
            k: weakref.ref(v, lambda _, pop=self._parents.pop, k=k: pop(k))
            for k, v in self._parents.items() if v is not None}

    def _invalidate_internal(self, value, invalidating_node):
        self._invalid = value
        for parent in list(self._parents.values()):
            parent = parent()
            if parent is not None:
                parent._invalidate_internal(value=value, invalidating_node=self)

    def set_children(self, *children):
        for child in children:
            ref = weakref.ref(
                self, lambda _, pop=child._parents.pop, k=id(self): pop(k))
            child._parents[id(self)] = ref  # corpus: sink
