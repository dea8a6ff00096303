# expect: ARH001 L0
# Missed: nothing in this module says `t` is a tensor, and id() of any object is common.
class ActivationStats:
    def __init__(self):
        self._means = {}

    def record(self, activations):
        for t in activations:
            self._means[id(t)] = t.mean()

    def mean_of(self, t):
        return self._means.get(id(t))
