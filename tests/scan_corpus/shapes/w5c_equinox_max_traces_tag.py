import weakref

_traces = weakref.WeakKeyDictionary()
_seen_args = weakref.WeakKeyDictionary()


class _Weakrefable:
    __slots__ = ("__weakref__",)


class _AssertMaxTraces:
    def __init__(self, fn, max_traces):
        self.fn = fn
        self.max_traces = max_traces
        self.tag = _Weakrefable()
        _traces[self.tag] = 0
        _seen_args[self.tag] = {}

    def __call__(self, *args, **kwargs):
        num_traces = _traces[self.tag] = _traces[self.tag] + 1  # corpus: sink
        if self.max_traces is not None and num_traces > self.max_traces:
            raise RuntimeError("too many traces")
        return self.fn(*args, **kwargs)


def _get_num_traces(fn):
    if isinstance(fn, _AssertMaxTraces):
        return _traces[fn.tag]
    elif hasattr(fn, "__wrapped__"):
        return _get_num_traces(fn.__wrapped__)
    return None


def assert_max_traces(fn, *, max_traces):
    return _AssertMaxTraces(fn, max_traces)
