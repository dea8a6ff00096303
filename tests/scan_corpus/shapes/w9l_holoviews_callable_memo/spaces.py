from . import util


class Callable:
    memoize = True

    def __init__(self, callable, inputs=()):
        self.callable = callable
        self.inputs = list(inputs)
        self._memoized = {}
        self._stream_memoization = self.memoize

    def __call__(self, *args, **kwargs):
        kwarg_hash = kwargs.pop('_memoization_hash_', ())
        if not args and not kwargs and not any(kwarg_hash): return self.callable()
        streams = []
        for i in self.inputs:
            for s in i.streams:
                if s not in streams: streams.append(s)
        memoize = self._stream_memoization
        values = tuple(tuple(sorted(s.hashkey.items())) for s in streams)
        key = args + kwarg_hash + values

        hashed_key = util.deephash(key) if self.memoize else None
        if hashed_key is not None and memoize and hashed_key in self._memoized:  # corpus: sink
            return self._memoized[hashed_key]

        ret = self.callable(*args, **kwargs)

        if hashed_key is not None:
            self._memoized = {hashed_key : ret}  # corpus: sink
        return ret
