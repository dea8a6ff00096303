class Tracer:
    def __init__(self):
        self._opaque_proxy = {}

    def proxy_for(self, real_obj, make):
        existing = self._opaque_proxy.get(id(real_obj))
        if existing is not None:
            return existing
        result = make(real_obj)
        if id(real_obj) not in self._opaque_proxy:
            self._opaque_proxy[id(real_obj)] = result  # corpus: sink
        return result
