import functools

import utils


def make_cast_wrapper(orig_fn, cast_fn, handle, try_caching=False):
    @functools.wraps(orig_fn)
    def wrapper(*args, **kwargs):
        if try_caching and handle.has_cache:
            args = list(args)
            for i in range(len(args)):
                if utils.should_cache(args[i]):
                    args[i] = utils.cached_cast(cast_fn, args[i], handle.cache)
        return orig_fn(*args, **kwargs)
    return wrapper
