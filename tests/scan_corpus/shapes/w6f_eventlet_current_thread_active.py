import threading

__threadlocal = threading.local()


class _GreenThread(object):
    def __init__(self, g):
        self._g = g  # the wrapper pins the greenlet

    ident = property(lambda self: id(self._g))


def getcurrent():
    return object()


def current_thread():
    g = getcurrent()
    try:
        active = __threadlocal.active
    except AttributeError:
        active = __threadlocal.active = {}

    g_id = id(g)
    t = active.get(g_id)
    if t is not None:
        return t

    def cleanup(g):
        del active[g_id]
    try:
        g.link(cleanup)
    except AttributeError:
        t = threading.current_thread()
    else:
        t = active[g_id] = _GreenThread(g)  # corpus: sink
    return t
