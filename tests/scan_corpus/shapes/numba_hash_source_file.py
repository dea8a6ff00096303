import functools
import hashlib


@functools.lru_cache(maxsize=None)  # corpus: sink
def hash_source(path, st_mtime, st_size):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).digest()
