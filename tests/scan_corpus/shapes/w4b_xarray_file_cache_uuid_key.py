import threading
import uuid

FILE_CACHE = {}
REF_COUNTS = {}

class CachingFileManager(object):
    def __init__(self, opener, *args, mode=None, kwargs=None, cache=None, manager_id=None):
        self._opener = opener
        self._args = args
        self._mode = mode
        self._kwargs = {} if kwargs is None else dict(kwargs)
        self._lock = threading.Lock()
        if cache is None:
            cache = FILE_CACHE
        self._cache = cache
        if manager_id is None:
            # Each call to CachingFileManager should separately open files.
            manager_id = str(uuid.uuid4())
        self._manager_id = manager_id
        self._key = self._make_key()

    def _make_key(self):
        value = (
            self._opener,
            self._args,
            "a" if self._mode == "w" else self._mode,
            tuple(sorted(self._kwargs.items())),
            self._manager_id,
        )
        return _HashedSequence(value)

    def _acquire_with_cache_info(self):
        with self._lock:
            try:
                file = self._cache[self._key]  # corpus: sink
            except KeyError:
                file = self._opener(*self._args, **self._kwargs)
                self._cache[self._key] = file
                return file, False
            else:
                return file, True

class _HashedSequence(list):
    def __init__(self, tuple_value):
        self[:] = tuple_value
        self.hashvalue = hash(tuple_value)

    def __hash__(self):
        return self.hashvalue
