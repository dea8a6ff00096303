# joblib/_dask.py: _WeakKeyDictionary, id-keyed map for unhashable args with a weakref callback
import weakref


class _WeakKeyDictionary:
    def __init__(self):
        self._data = {}

    def __getitem__(self, obj):
        ref, val = self._data[id(obj)]  # corpus: sink
        if ref() is not obj:
            raise KeyError(obj)
        return val

    def __setitem__(self, obj, value):
        key = id(obj)  # corpus: sink
        try:
            ref, _ = self._data[key]
            if ref() is not obj:
                raise KeyError(obj)
        except KeyError:
            def on_destroy(_):
                del self._data[key]
            ref = weakref.ref(obj, on_destroy)
        self._data[key] = ref, value

    def clear(self):
        self._data.clear()


class DaskDistributedBackend:
    def start_call(self):
        self.call_data_futures = _WeakKeyDictionary()

    def stop_call(self):
        self.call_data_futures.clear()
