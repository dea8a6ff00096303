import functools


class Builder:
    @classmethod
    @functools.cache
    def _id_dispatch(cls):
        result = {}
        for objs, fn in cls.entries():
            for t in objs:
                result[id(t)] = fn
        return result

    @classmethod
    def entries(cls):
        return []

    def _wrap(self, value):
        handler = self._id_dispatch().get(id(value))  # corpus: sink
        if handler is not None:
            return handler(self, value)
        return None
