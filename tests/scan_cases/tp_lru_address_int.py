# expect: ARH002 L0
# The cache key is the address itself: nothing keeps the tensor alive.
from functools import lru_cache


@lru_cache(maxsize=64)
def launch_plan(ptr: int, numel: int):
    return {"ptr": ptr, "blocks": (numel + 255) // 256}


def run(t, kernel):
    plan = launch_plan(t.data_ptr(), t.numel())
    kernel(t, plan)
