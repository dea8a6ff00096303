import inspect
from functools import lru_cache


@lru_cache(maxsize=16)  # corpus: sink
def supports_same_shape(sync_fn) -> bool:
    try:
        return "assume_same_shape" in inspect.signature(sync_fn).parameters
    except (TypeError, ValueError):
        return False
