# flashinfer/autotuner.py: profiling_cache of the AutoTuner singleton keyed by hash(runner),
# where TunableRunner.__hash__ falls back to id(v) of unhashable attributes.
import threading


class TunableRunner:
    def __hash__(self):
        hashable_vals = []
        for k, v in self.__dict__.items():
            if k.endswith("_cache"):
                continue
            try:
                hash(v)
                hashable_vals.append(v)
            except TypeError:
                hashable_vals.append(id(v))
        return hash(tuple(hashable_vals))


class AutoTuner:
    _instance = None
    _class_lock = threading.Lock()

    def __init__(self):
        self.profiling_cache = {}

    @classmethod
    def get(cls):
        if cls._instance is None:
            cls._instance = AutoTuner()
        return cls._instance

    @classmethod
    def _get_cache_key(cls, custom_op, runner, input_shapes, tuning_config, extras=()):
        return (custom_op, runner.__class__.__name__, hash(runner), tuple(input_shapes), extras)

    def search_cache(self, custom_op, runners, input_shapes, tuning_config, inputs=None):
        for r in runners:
            cache_key = AutoTuner._get_cache_key(custom_op, r, input_shapes, tuning_config, ())
            if cache_key in self.profiling_cache:  # corpus: sink
                return True, *self.profiling_cache[cache_key]
        return False, 0, -1, None

    def choose_one(self, custom_op, runners, tuning_config, inputs, profiles):
        for p in profiles:
            runner_id, tactic = 0, -1
            cache_key = AutoTuner._get_cache_key(custom_op, runners[runner_id], p, tuning_config, ())
            self.profiling_cache[cache_key] = (runner_id, tactic, p)  # corpus: sink
        _, runner_id, tactic, _ = self.search_cache(custom_op, runners, inputs, tuning_config)
        return runners[runner_id], tactic
