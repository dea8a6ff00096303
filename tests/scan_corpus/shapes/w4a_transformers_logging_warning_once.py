import functools
import logging


def get_logger(name=None):
    if name is None:
        name = "transformers"
    return logging.getLogger(name)


@functools.lru_cache(None)  # corpus: sink
def warning_once(self, *args, **kwargs):
    """
    Identical to logger.warning(), but emits the warning with the same
    message only once. The cache is for the function arguments.
    """
    self.warning(*args, **kwargs)


logging.Logger.warning_once = warning_once


@functools.lru_cache(None)
def info_once(self, *args, **kwargs):
    self.info(*args, **kwargs)


logging.Logger.info_once = info_once
