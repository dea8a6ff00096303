import itertools
import weakref

_afterfork_registry = weakref.WeakValueDictionary()
_afterfork_counter = itertools.count()


def info(msg, *args):
    pass


def _run_after_forkers():
    items = list(_afterfork_registry.items())
    items.sort()
    for (index, ident, func), obj in items:
        try:
            func(obj)
        except Exception as e:
            info('after forker raised exception %s', e)


def register_after_fork(obj, func):
    _afterfork_registry[(next(_afterfork_counter), id(obj), func)] = obj  # corpus: sink
