import os
from types import FunctionType


def _object_store_put(data):
    return ("objref", data)


class RayWrapper:

    # class attribute: lives for the whole process
    _func_cache = {}

    @classmethod
    def put(cls, data, **kwargs):
        if isinstance(data, FunctionType):
            qname = data.__qualname__
            if "<locals>" not in qname and "<lambda>" not in qname:
                ref = cls._func_cache.get(data, None)
                if ref is None:
                    if len(cls._func_cache) < 1024:
                        ref = _object_store_put(data)
                        # key is the function object itself (identity hash), held strongly
                        cls._func_cache[data] = ref  # corpus: sink
                    else:
                        msg = "To many functions in the RayWrapper cache!"
                        assert "MODIN_GITHUB_CI" not in os.environ, msg
                return ref
        return _object_store_put(data)
