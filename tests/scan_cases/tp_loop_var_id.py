# expect: ARH001 L0
# id() of a loop variable: whatever it is, the map outlives it.
class ActivationStats:
    def __init__(self):
        self._means = {}

    def record(self, activations):
        for t in activations:
            self._means[id(t)] = t.mean()

    def mean_of(self, t):
        return self._means.get(id(t))
