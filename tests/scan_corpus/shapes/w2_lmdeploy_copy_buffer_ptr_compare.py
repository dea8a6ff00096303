class Parameter:
    pass


class Buffer:
    pass


def _copy_buffer(src, dst):
    if isinstance(src, Parameter):
        return
    if isinstance(src, Buffer):
        return
    if src is not None and dst is not None:
        if src.data_ptr() != dst.data_ptr():  # corpus: sink
            dst.copy_(src)


class CudagraphPiecewiseWrapperImpl:
    def __init__(self):
        self.input_args = []
        self.input_kwargs = {}

    def _copy_inputs(self, *args, **kwargs):
        for arg, arg_buffer in zip(args, self.input_args):
            _copy_buffer(arg, arg_buffer)
        for k, arg in kwargs.items():
            if k not in self.input_kwargs:
                continue
            arg_buffer = self.input_kwargs[k]
            _copy_buffer(arg, arg_buffer)
