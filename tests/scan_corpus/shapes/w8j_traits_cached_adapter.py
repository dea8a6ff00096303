import weakref


class CachedAdapterFactory(object):
    """ An adapter factory that caches adapters per instance. """

    def __init__(self, factory):
        self._factory = factory
        self._adapter_cache = self.__adapter_cache_default()

    def __call__(self, adaptee):
        adapter = self._adapter_cache.get(adaptee, None)
        if adapter is None:
            adapter = self.factory(adaptee)
            self._adapter_cache[adaptee] = adapter  # corpus: sink

        return adapter

    @property
    def factory(self):
        return self._factory

    @property
    def is_empty(self):
        return len(self._adapter_cache) == 0

    def __adapter_cache_default(self):
        return weakref.WeakKeyDictionary()
