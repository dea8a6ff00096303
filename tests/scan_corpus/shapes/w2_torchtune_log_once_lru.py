import logging
from functools import lru_cache


@lru_cache(None)  # corpus: sink
def log_once(logger: logging.Logger, msg: str, level: int = logging.INFO) -> None:
    """Logs a message only once (LRU cache keyed by logger, message, level)."""
    log_rank_zero(logger=logger, msg=msg, level=level)


def log_rank_zero(logger: logging.Logger, msg: str, level: int = logging.INFO) -> None:
    logger.log(level, msg, stacklevel=2)
