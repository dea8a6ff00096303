from contextvars import ContextVar

_active_calls: ContextVar = ContextVar("_active_calls", default=None)


def call_once_guarded(original_method, callback):
    def guarded_method(self, *args, **kwargs):
        active = _active_calls.get()
        if active is None:
            active = set()
            _active_calls.set(active)
        key = (id(self), id(original_method))
        if key in active:  # corpus: sink
            callback(self)
        active.add(key)
        try:
            return original_method(self, *args, **kwargs)
        finally:
            active.discard(key)

    return guarded_method
