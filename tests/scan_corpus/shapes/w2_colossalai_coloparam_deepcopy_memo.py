import copy


class ColoTensor:
    pass


class ColoParameter(ColoTensor):
    def __init__(self, data=None, requires_grad: bool = True):
        self.data = data
        self.requires_grad = requires_grad

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        else:
            data = copy.copy(self.data)
            tensor = ColoParameter(data, self.requires_grad)
            memo[id(self)] = tensor  # corpus: sink
            return tensor

