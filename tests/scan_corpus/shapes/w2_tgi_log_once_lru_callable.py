from functools import lru_cache

# Module-level functools cache. Its key is the tuple (log, msg):
# `log` is a logger method object and `msg` a string. lru_cache stores the
# argument objects themselves in its key, so it holds strong references to
# them; no id() or address is taken, and the cache is capped at 10 entries.


@lru_cache(10)
def log_once(log, msg: str):  # corpus: sink
    log(msg)
