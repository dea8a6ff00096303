from typing import Any


class ContextObject:
    def __init__(self, name: str, obj: Any):
        self.name = name
        self.obj = obj


class TraceCtx:
    def __init__(self, fn=None):
        self.fn = fn
        self.obj_name_ctr = 0
        self.names = set()
        self._object_ctx: dict[int, ContextObject] = {}

    def make_object_name(self, x: Any) -> str:
        name = f"_{type(x).__name__}_{self.obj_name_ctr}"
        self.obj_name_ctr += 1
        self.names.add(name)
        return name

    def add_object(self, x: Any) -> ContextObject:
        key = id(x)

        prev = self._object_ctx.get(key, None)  # corpus: sink

        if prev is None:
            val = ContextObject(self.make_object_name(x), x)
            self._object_ctx[key] = val  # corpus: sink
            return val

        return prev


def _to_printable(tracectx, x):
    if tracectx is not None:
        co = tracectx.add_object(x)
        return co, None
    return x, None
