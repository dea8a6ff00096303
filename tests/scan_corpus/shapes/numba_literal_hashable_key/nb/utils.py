def get_hashable_key(value):
    try:
        hash(value)
    except TypeError:
        return id(value)
    return value
