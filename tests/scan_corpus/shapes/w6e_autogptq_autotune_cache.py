import math


class CustomizedTritonAutoTuner:
    def __init__(self, fn, arg_names, configs, key, nearest_power_of_two=False):
        self.configs = configs
        self.key_idx = [arg_names.index(k) for k in key]
        self.nearest_power_of_two = nearest_power_of_two
        self.cache = {}
        self.arg_names = arg_names
        self.fn = fn

    def _bench(self, *args, config):
        return 1.0

    def run(self, *args, **kwargs):
        if len(self.configs) > 1:
            key = tuple(args[i] for i in self.key_idx)
            if self.nearest_power_of_two:
                key = tuple([2 ** int(math.log2(x) + 0.5) for x in key])
            if key not in self.cache:
                timings = {config: self._bench(*args, config=config) for config in self.configs}
                self.cache[key] = min(timings, key=timings.get)  # corpus: sink
            config = self.cache[key]
        else:
            config = self.configs[0]
        return self.fn(*args, config=config, **kwargs)


def autotune(configs, key, nearest_power_of_two=False):
    def decorator(fn):
        return CustomizedTritonAutoTuner(fn, fn.arg_names, configs, key, nearest_power_of_two)
    return decorator
