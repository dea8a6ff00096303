# bitsandbytes/utils.py: singleton OutlierTracer, dict keyed by weight storage data_ptr()


def outlier_hook(module, input):
    tracer = OutlierTracer.get_instance()
    hvalue = tracer.get_hvalue(module.weight)
    if hvalue not in tracer.hvalue2outlier_idx:  # corpus: sink
        outlier_idx = find_outlier_dims(module.weight)
        tracer.outliers.append(outlier_idx)
        tracer.hvalues.append(hvalue)
        if len(tracer.outliers) > 1:
            tracer.hvalue2outlier_idx[hvalue] = tracer.outliers[-1]  # corpus: sink
        else:
            tracer.hvalue2outlier_idx[hvalue] = outlier_idx  # corpus: sink
    else:
        for hook in tracer.hooks:
            hook.remove()


class OutlierTracer:
    _instance = None

    def initialize(self, model):
        self.hvalues = []
        self.outliers = []
        self.hvalue2outlier_idx = {}
        self.initialized = True
        self.hooks = []
        for n, m in model.named_modules():
            self.hooks.append(m.register_forward_pre_hook(outlier_hook))

    def get_hvalue(self, weight):
        return weight.data.storage().data_ptr()

    def get_outliers(self, weight):
        hvalue = self.get_hvalue(weight)
        if hvalue in self.hvalue2outlier_idx:  # corpus: sink
            return self.hvalue2outlier_idx[hvalue]  # corpus: sink
        return None

    @classmethod
    def get_instance(cls):
        if cls._instance is None:
            cls._instance = cls.__new__(cls)
        return cls._instance


def find_outlier_dims(weight):
    return weight
