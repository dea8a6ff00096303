import builtins
import functools
import operator
from functools import lru_cache


@lru_cache(None)
def _builtin_function_ids():
    rv = {
        id(v): f"builtins.{k}"  # corpus: sink
        for k, v in builtins.__dict__.items()
        if not k.startswith("_") and callable(v)
    }
    rv.update(
        {
            id(v): f"operator.{k}"
            for k, v in operator.__dict__.items()
            if not k.startswith("_") and callable(v)
        }
    )
    rv[id(functools.reduce)] = "functools.reduce"
    return rv


def is_builtin(obj):
    return id(obj) in _builtin_function_ids()
