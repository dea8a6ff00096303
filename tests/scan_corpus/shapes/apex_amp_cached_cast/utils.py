def is_nested(x):
    return isinstance(x, tuple) or isinstance(x, list)


def should_cache(x):
    return getattr(x, "is_leaf", False)


def cached_cast(cast_fn, x, cache):
    if is_nested(x):
        return type(x)([cached_cast(cast_fn, y, cache) for y in x])
    if x in cache:
        cached_x = cache[x]
        if x.requires_grad != cached_x.requires_grad:
            del cache[x]
        else:
            return cached_x
    casted_x = cast_fn(x)
    # the key is the tensor object (hashed by identity) and the dict holds it
    cache[x] = casted_x  # corpus: sink
    return casted_x
