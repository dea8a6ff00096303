class Device:
    def __init__(self, devnum):
        self.id = devnum  # numeric CUDA device ordinal, not an address
        self.compute_capability = (8, 0)


class CUDACodeLibrary:

    def __init__(self, entry_name=None):
        # Maps Device numeric ID -> cufunc
        self._cufunc_cache = {}
        self._entry_name = entry_name

    def get_cubin(self, cc=None):
        return b""

    def get_cufunc(self, ctx):
        if self._entry_name is None:
            raise RuntimeError("Missing entry_name")

        device = ctx.device

        cufunc = self._cufunc_cache.get(device.id, None)
        if cufunc:
            return cufunc

        cubin = self.get_cubin(cc=device.compute_capability)
        module = ctx.create_module_image(cubin)

        cufunc = module.get_function(self._entry_name)

        # Populate caches
        self._cufunc_cache[device.id] = cufunc  # corpus: sink

        return cufunc
