# expect: none
# Offsets into one buffer, in parameters named like pointers: a name says nothing of where a value
# comes from, so none of them is taken for an address.
class Allocator:
    def __init__(self):
        self.sizes = {}
        self.ids = {}

    def carve(self, address, size, tensor_id):
        self.sizes[address] = size
        self.ids[address] = tensor_id

    def free(self, ptr):
        return self.sizes.pop(ptr)
