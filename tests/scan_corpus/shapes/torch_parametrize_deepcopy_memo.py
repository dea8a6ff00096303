from copy import deepcopy


def install(cls):
    def default_deepcopy(self, memo):
        obj = memo.get(id(self), None)  # corpus: sink
        if obj is not None:
            return obj
        replica = self.__new__(self.__class__)
        memo[id(self)] = replica
        replica.__dict__ = deepcopy(self.__dict__, memo)
        return replica

    cls.__deepcopy__ = default_deepcopy
