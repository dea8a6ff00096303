import copy


class TracedModule:
    def __deepcopy__(self, memo):
        res = type(self).__new__(type(self))
        memo[id(self)] = res  # corpus: sink
        res.__dict__ = copy.deepcopy(self.__dict__, memo)
        return res
