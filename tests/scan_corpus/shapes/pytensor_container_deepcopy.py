from copy import deepcopy


class Container:
    def __init__(self, storage):
        self.storage = storage

    def __deepcopy__(self, memo):
        was_in_memo = id(self.storage[0]) in memo
        r = type(self)(deepcopy(self.storage, memo=memo))
        if not was_in_memo:
            memo[id(self.storage[0])] = r.storage[0]  # corpus: sink
        return r
