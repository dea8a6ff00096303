class Props:
    def __init__(self, tensor):
        self.storage_ptr = tensor.untyped_storage().data_ptr()
        self.size = tensor.untyped_storage().nbytes()
        self.start = tensor.data_ptr()
        self.end = self.start + tensor.numel() * tensor.element_size()

    def is_complete(self):
        return self.start == self.storage_ptr and self.end == self.storage_ptr + self.size  # corpus: sink
