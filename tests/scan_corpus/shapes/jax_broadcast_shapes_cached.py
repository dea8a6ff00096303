from functools import lru_cache


@lru_cache(maxsize=None)  # corpus: sink
def broadcast_shapes_cached(*shapes: tuple[int, ...]) -> tuple[int, ...]:
    n = max(len(s) for s in shapes)
    padded = [(1,) * (n - len(s)) + s for s in shapes]
    return tuple(max(d) for d in zip(*padded))
