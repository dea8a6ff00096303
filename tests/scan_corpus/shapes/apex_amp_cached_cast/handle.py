class AmpHandle:
    def __init__(self, enable_caching=True):
        self._enable_caching = enable_caching
        # long-lived cache on the handle, keyed by the fp32 parameter tensor itself
        self._cache = dict()

    @property
    def has_cache(self):
        return self._enable_caching

    @property
    def cache(self):
        return self._cache

    def _clear_cache(self):
        self._cache.clear()
