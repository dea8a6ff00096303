import hashlib
from dataclasses import dataclass
from typing import Dict, List


@dataclass
class BufferEntry:
    buffer: bytes
    alignment: int


class NamedDataStore:
    buffers: List[BufferEntry]
    # Cache of the data hash for deduplication.
    data_cache: Dict[str, int]
    # Cache of the keys to ensure uniqueness.
    key_cache: Dict[str, int]

    def __init__(self) -> None:
        self.buffers = []
        self.pte_data = {}
        self.data_cache = {}
        self.key_cache = {}

    def _add_named_data_to_map(self, key, data, alignment, map):
        buffer_idx = self.key_cache.get(key, -1)
        if buffer_idx != -1:
            if self.buffers[buffer_idx].buffer != data:
                raise ValueError(f"Duplicate key {key} with different data.")
        else:
            hashed = hashlib.sha256(data).hexdigest()
            buffer_idx = self.data_cache.get(hashed, -1)
            if buffer_idx == -1:
                buffer_idx = len(self.buffers)
                self.buffers.append(BufferEntry(data, alignment))
                self.data_cache[hashed] = buffer_idx  # corpus: sink
            map[key] = buffer_idx
            self.key_cache[key] = buffer_idx

    def add_named_data(self, key, data, alignment=1, external_tag=None):
        self._add_named_data_to_map(key, data, alignment, self.pte_data)
