from functools import lru_cache, singledispatch


class _DispatchNotFound:
    pass


class MultiStrategyDispatch:
    def __init__(self, fallback_factory, converter):
        self._fallback_factory = fallback_factory
        self._direct_dispatch = {}
        self._single_dispatch = singledispatch(_DispatchNotFound)
        self.dispatch = lru_cache(maxsize=None)(self.dispatch_without_caching)  # corpus: sink

    def dispatch_without_caching(self, typ):
        try:
            dispatch = self._single_dispatch.dispatch(typ)
            if dispatch is not _DispatchNotFound:
                return dispatch
        except Exception:
            pass
        direct_dispatch = self._direct_dispatch.get(typ)
        if direct_dispatch is not None:
            return direct_dispatch
        return self._fallback_factory(typ)

    def register_cls_list(self, cls_and_handler, direct=False):
        for cls, handler in cls_and_handler:
            if direct:
                self._direct_dispatch[cls] = handler
            else:
                self._single_dispatch.register(cls, handler)
        self.dispatch.cache_clear()

    def clear_cache(self):
        self._direct_dispatch.clear()
        self.dispatch.cache_clear()
