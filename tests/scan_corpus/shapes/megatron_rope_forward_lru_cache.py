from functools import lru_cache
from typing import Optional


def internal_api(fn):
    return fn


class RotaryEmbedding:
    def __init__(self, inv_freq, cp_group=None):
        self.inv_freq = inv_freq
        self.cp_group = cp_group

    def get_emb(self, max_seq_len: int, offset: int = 0):
        return (max_seq_len, offset, self.inv_freq)

    # functools cache on a method: the key is (self, max_seq_len, offset, packed_seq,
    # cp_group); it hashes self/cp_group by identity but stores them, so they stay alive
    @lru_cache(maxsize=32)  # corpus: sink
    @internal_api
    def forward(
        self,
        max_seq_len: int,
        offset: int = 0,
        packed_seq: bool = False,
        cp_group: Optional[object] = None,
    ):
        emb = self.get_emb(max_seq_len, offset)
        if cp_group is None:
            cp_group = self.cp_group
        return emb
