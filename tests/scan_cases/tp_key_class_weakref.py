# expect: ARH001 L1
import weakref


class TensorKey:
    def __init__(self, t):
        self._ref = weakref.ref(t)
        self.key = (t.data_ptr(), t.shape, t.stride(), t.dtype)

    def __hash__(self):
        return hash(self.key)

    def __eq__(self, other):
        if self._ref() is None or other._ref() is None:
            return self is other
        return self.key == other.key


_plans = {}


def plan_for(t, build):
    k = TensorKey(t)
    if k not in _plans:
        _plans[k] = build(t)
    return _plans[k]
