# expect: ARH001 L1
# Keyed by address, but each entry is removed before its storage can die, so it can
# never meet a reused address: safe in practice, which a static scan cannot see (it
# suggests L0).
import threading

_lock = threading.Lock()
_busy = {}


def share(storage, do_share):
    with _lock:
        key = storage._cdata
        if key in _busy:
            return
        _busy[key] = True
    try:
        do_share(storage)
    finally:
        with _lock:
            del _busy[key]
