class InternalStorage:
    def __init__(self, size, dtype, device, convert_cpu=False):
        self._params = []
        self._param_ids = []
        self._fill = 0
        self._device = device
        self._dtype = dtype


class ParamStorage(InternalStorage):
    def __init__(self, size, dtype, device):
        super().__init__(size, dtype, device, convert_cpu=True)
        self.param2align = None

    def add_rank_params(self, trainable_params, param2align, convert_gpu=True):
        assert all(
            id(param) not in self._param_ids for param in trainable_params
        ), "The same param cannot be checked in twice"

        self.param2align = param2align

        for idx, param in enumerate(trainable_params):
            self._convert_buffer(param, param.shape, param2align[param.name])
            self._params.append(param)
            self._param_ids.append(id(param))  # corpus: sink

    def _convert_buffer(self, param, p_shape, align):
        self._fill = self._fill + align
