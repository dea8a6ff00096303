class Tensor:
    @property
    def __cuda_array_interface__(self):
        shape = tuple(self.shape)
        data_ptr = self.data_ptr() if self.numel() > 0 else 0  # corpus: sink
        return dict(typestr="<f4", shape=shape, strides=None, data=(data_ptr, False), version=2)
