# bitsandbytes/functional.py: singleton cache of cuBLAS handles keyed by device index
import ctypes as ct


class CUBLAS_Context:
    _instance = None

    def initialize(self):
        self.context = {}

    @classmethod
    def get_instance(cls):
        if cls._instance is None:
            cls._instance = cls.__new__(cls)
            cls._instance.initialize()
        return cls._instance

    def get_context(self, device):
        if device.index not in self.context:
            prev_device = torch.cuda.current_device()
            torch.cuda.set_device(device)
            self.context[device.index] = ct.c_void_p(lib.get_context())  # corpus: sink
            torch.cuda.set_device(prev_device)
        return self.context[device.index]
