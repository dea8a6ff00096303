# flashinfer/autotuner.py: per-config override cache is a WeakKeyDictionary keyed by the
# TuningConfig object itself (whose hash is built from id() of its callables).
import weakref


class AutoTuner:
    def __init__(self):
        self._override_config_cache = weakref.WeakKeyDictionary()

    def _apply_tuning_overrides(self, tuning_config, buckets, round_up_flag):
        per_config = self._override_config_cache.get(tuning_config)
        cache_key = (buckets, round_up_flag)
        if per_config is not None and cache_key in per_config:
            return per_config[cache_key]
        new_config = make_config(tuning_config.dynamic_tensor_specs, buckets)
        self._override_config_cache.setdefault(tuning_config, {})[cache_key] = (  # corpus: sink
            new_config
        )
        return new_config


def make_config(specs, buckets):
    return (tuple(specs), buckets)
