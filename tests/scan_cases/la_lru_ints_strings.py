# expect: none
from functools import lru_cache


@lru_cache(maxsize=None)
def window_sizes(seq_len: int, heads: int) -> tuple:
    return tuple(seq_len // (h + 1) for h in range(heads))


@lru_cache
def template(name: str) -> str:
    return name.upper()


def build(seq_len):
    return window_sizes(seq_len, 8), template("attn")
