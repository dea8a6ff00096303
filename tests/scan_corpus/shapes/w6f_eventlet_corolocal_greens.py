import weakref
import threading


def getcurrent():
    return threading.current_thread()


def get_ident():
    """ Returns ``id()`` of current greenlet.  Useful for debugging."""
    return id(getcurrent())


class _localbase(object):
    __slots__ = '_local__args', '_local__greens'

    def __new__(cls, *args, **kw):
        self = object.__new__(cls)
        object.__setattr__(self, '_local__args', (args, kw))
        object.__setattr__(self, '_local__greens', weakref.WeakKeyDictionary())
        return self


def _patch(thrl):
    greens = object.__getattribute__(thrl, '_local__greens')
    cur = getcurrent()
    if cur not in greens:
        greens[cur] = {}  # corpus: sink
    object.__setattr__(thrl, '__dict__', greens[cur])


class local(_localbase):
    def __getattribute__(self, attr):
        _patch(self)
        return object.__getattribute__(self, attr)

    def __setattr__(self, attr, value):
        _patch(self)
        return object.__setattr__(self, attr, value)
