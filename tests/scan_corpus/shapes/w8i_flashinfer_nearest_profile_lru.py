# flashinfer/autotuner.py: lru_cache'd classmethod keyed by a TuningConfig whose hash
# includes id(map_to_tuning_buckets); the lru_cache key holds the config (and so the callable).
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable, Tuple


@dataclass(slots=True)
class DynamicTensorSpec:
    input_idx: Tuple[int, ...]
    dim_idx: Tuple[int, ...]
    gen_tuning_buckets: object
    map_to_tuning_buckets: Callable

    def __hash__(self) -> int:
        return hash((self.input_idx, self.dim_idx,
                     self.gen_tuning_buckets if isinstance(self.gen_tuning_buckets, tuple)
                     else id(self.gen_tuning_buckets),
                     id(self.map_to_tuning_buckets)))


@dataclass(kw_only=True, unsafe_hash=True)
class TuningConfig:
    dynamic_tensor_specs: Tuple[DynamicTensorSpec, ...] = ()


class AutoTuner:
    @classmethod
    @lru_cache(maxsize=None)
    def _find_nearest_profile(cls, shapes, tuning_config):
        base_profile = list(list(shape) for shape in shapes)
        for spec in tuning_config.dynamic_tensor_specs:
            mapped_val = spec.map_to_tuning_buckets(base_profile[spec.input_idx[0]][spec.dim_idx[0]])
            for input_i, dim_i in zip(spec.input_idx, spec.dim_idx, strict=True):
                base_profile[input_i][dim_i] = mapped_val
        return tuple(tuple(shape) for shape in base_profile)

    @classmethod
    def _get_cache_key(cls, custom_op, runner, input_shapes, tuning_config, extras=()):
        return (custom_op, runner.__class__.__name__, hash(runner),
                cls._find_nearest_profile(input_shapes, tuning_config),  # corpus: sink
                extras)
