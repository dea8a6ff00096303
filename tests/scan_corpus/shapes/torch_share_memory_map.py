import functools
import threading

_lock = threading.Lock()
_in_progress = {}


def guarded(fn):
    @functools.wraps(fn)
    def wrapper(self, *args):
        with _lock:
            key = self._cdata
            if key in _in_progress:
                waiter = _in_progress[key]
            else:
                _in_progress[key] = threading.RLock()  # corpus: sink
                waiter = None
        return fn(self, *args)
    return wrapper
