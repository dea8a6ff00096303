# funsor/memoize.py: memoize() interpretation that caches term construction
from collections.abc import Hashable
from contextlib import contextmanager

import funsor.interpreter as interpreter


@contextmanager
def memoize(cache=None):
    if cache is None:
        cache = {}

    @interpreter.interpretation(interpreter._INTERPRETATION)
    def memoize_interpretation(cls, *args):
        key = tuple(id(arg) if not isinstance(arg, Hashable) else arg for arg in args)
        if key not in cache:  # corpus: sink
            cache[key] = cls(*args)  # corpus: sink
        return cache[key]  # corpus: sink

    with interpreter.interpretation(memoize_interpretation):
        yield cache
