import threading
import uuid

REF_COUNTS = {}


class CachingFileManager(object):
    def __init__(self, opener, *args, manager_id=None, ref_counts=None):
        self._opener = opener
        self._args = args
        if manager_id is None:
            manager_id = str(uuid.uuid4())
        self._manager_id = manager_id
        self._key = self._make_key()
        if ref_counts is None:
            ref_counts = REF_COUNTS
        self._ref_counter = _RefCounter(ref_counts)
        self._ref_counter.increment(self._key)

    def _make_key(self):
        return (self._opener, self._args, self._manager_id)

    def __del__(self):
        ref_count = self._ref_counter.decrement(self._key)
        if not ref_count:
            pass  # close the cached file


class _RefCounter:
    def __init__(self, counts):
        self._counts = counts
        self._lock = threading.Lock()

    def increment(self, name):
        with self._lock:
            count = self._counts[name] = self._counts.get(name, 0) + 1  # corpus: sink
        return count

    def decrement(self, name):
        with self._lock:
            count = self._counts[name] - 1
            if count:
                self._counts[name] = count
            else:
                del self._counts[name]
        return count
