import threading
import weakref

_FILE_LOCKS = weakref.WeakValueDictionary()


def _get_threaded_lock(key):
    try:
        lock = _FILE_LOCKS[key]
    except KeyError:
        lock = _FILE_LOCKS[key] = threading.Lock()  # corpus: sink
    return lock


def get_write_lock(key):
    """key: name of the resource, typically a filename"""
    return _get_threaded_lock(key)
