# src/gevent/threading.py: _DummyThread registers itself in threading._active under id(greenlet)
import threading as __threading__
import weakref
from gevent.hub import getcurrent


def _get_ident(gr=None):
    # gevent.thread.get_ident
    if gr is None:
        gr = getcurrent()
    return id(gr)


def _cleanup(g):
    __threading__._active.pop(_get_ident(g), None)  # corpus: sink


def _make_cleanup_id(gid):
    def _(_r):
        __threading__._active.pop(gid, None)  # corpus: sink
    return _


class _DummyThread(__threading__._DummyThread):
    def __init__(self):
        g = getcurrent()
        gid = _get_ident(g)
        __threading__._active[gid] = self  # corpus: sink
        rawlink = getattr(g, 'rawlink', None)
        if rawlink is not None:
            rawlink(_cleanup)
        else:
            ref = weakref.ref(g, _make_cleanup_id(gid))
            self.__raw_ref = ref
