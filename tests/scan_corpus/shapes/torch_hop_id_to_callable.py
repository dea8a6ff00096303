import itertools
import weakref

_next_id = itertools.count()


class CompiledCallable:
    def __init__(self, fn):
        self.idx = next(_next_id)
        self.fn = fn


class Registry:
    def __init__(self):
        self.id_to_callable = weakref.WeakValueDictionary()

    def add_callable(self, callable_obj):
        self.id_to_callable[callable_obj.idx] = callable_obj  # corpus: sink
        return callable_obj.idx
