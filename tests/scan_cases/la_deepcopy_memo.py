# expect: none
import copy


class Wrapper:
    def __init__(self, t):
        self.t = t

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        out = memo[id(self)] = Wrapper(copy.deepcopy(self.t, memo))
        return out
