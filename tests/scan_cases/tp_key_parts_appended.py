# expect: ARH001 L0
# A helper appends the identity of each argument to the caller's list of key parts.
class DispatchCache:
    cache = {}

    def _append_key_parts(self, parts, args):
        for arg in args:
            parts.append(type(arg))
            parts.append(id(arg))

    def dispatch(self, func, args, compute):
        parts = [func]
        self._append_key_parts(parts, args)
        key = tuple(parts)
        if key not in DispatchCache.cache:
            DispatchCache.cache[key] = compute(func, args)
        return DispatchCache.cache[key]
