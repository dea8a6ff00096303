class InternalStorage:
    def __init__(self, size, dtype, device, convert_cpu=False):
        self._params = []
        self._param_ids = []
        self._fill = 0
        self._device = device
        self._dtype = dtype


class GradStorage(InternalStorage):
    def __init__(self, size, dtype, device, destination, parm2align, convert_cpu=False):
        super().__init__(size, dtype, device, convert_cpu)
        self._max_size = size
        self.params_checked_in = 0
        self._parm2align = parm2align

    def can_add_grad_view(self, param, align):
        return (
            self._fill + param._numel() + align <= self._max_size
            and id(param) not in self._param_ids  # corpus: sink
        )

    def add_grad(self, param, align):
        assert (
            id(param) not in self._param_ids
        ), "The same gradients cannot be checked in twice"

        self._add_grad_as_view(param, align)
        self._params.append(param)
        self._param_ids.append(id(param))

    def _add_grad_as_view(self, param, align):
        self._fill = self._fill + param._numel() + align
