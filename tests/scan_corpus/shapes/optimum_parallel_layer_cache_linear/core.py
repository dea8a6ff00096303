# optimum/fx/parallelization/core.py: long-lived execution context shared across (re)compilations
from dataclasses import dataclass, field
from typing import Any, Dict, List


@dataclass
class ParallelExecutionCtx:
    tp_group: Any
    current_device: Any
    example_inputs: List[Any] = field(default_factory=list)
    parallel_layer_cache: Dict[int, Any] = field(default_factory=dict)
    weight_map: Dict[str, str] = field(default_factory=dict)
    compile_times: int = 0
