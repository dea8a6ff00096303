# bitsandbytes/optim/optimizer.py: process-wide GlobalOptimManager keyed by id(param)


class GlobalOptimManager:
    _instance = None

    def initialize(self):
        self.pid2config = {}
        self.index2config = {}
        self.module_weight_config_triple = []

    @classmethod
    def get_instance(cls):
        if cls._instance is None:
            cls._instance = cls.__new__(cls)
            cls._instance.initialize()
        return cls._instance

    def register_parameters(self, params):
        param_groups = list(params)
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for group_index, group in enumerate(param_groups):
            for p_index, p in enumerate(group["params"]):
                if id(p) in self.pid2config:  # corpus: sink
                    self.index2config[(group_index, p_index)] = self.pid2config[id(p)]  # corpus: sink

    def override_config(self, parameters, key=None, value=None, key_value_dict=None):
        if key is not None and value is not None:
            key_value_dict = {key: value}
        if key_value_dict is not None:
            for p in parameters:
                if id(p) in self.pid2config:
                    self.pid2config[id(p)].update(key_value_dict)
                else:
                    self.pid2config[id(p)] = key_value_dict  # corpus: sink
