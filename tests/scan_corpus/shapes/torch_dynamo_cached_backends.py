cached_backends = {}


def innermost(callback):
    return getattr(callback, "_inner", callback)


def optimize(callback):
    backend = innermost(callback)
    cached_backends.setdefault(id(backend), backend)  # corpus: sink
    return backend
