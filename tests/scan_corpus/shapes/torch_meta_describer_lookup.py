from torch.utils.weak import WeakIdKeyDictionary


class Describer:
    def __init__(self):
        self.next_tensor_id = 0
        self.lookup_tensor = WeakIdKeyDictionary()

    def get_tensor_id(self, t):
        if t not in self.lookup_tensor:
            self.lookup_tensor[t] = self.next_tensor_id  # corpus: sink
            self.next_tensor_id += 1
        return self.lookup_tensor[t]
