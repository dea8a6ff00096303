import threading


def getcurrent():
    return threading.current_thread()


def get_ident():
    """ Returns ``id()`` of current greenlet.  Useful for debugging."""
    return id(getcurrent())


class local(object):

    def __init__(self):
        self.__dict__['__objs'] = {}

    def __getattr__(self, attr, g=get_ident):
        try:
            return self.__dict__['__objs'][g()][attr]  # corpus: sink
        except KeyError:
            raise AttributeError(attr)

    def __setattr__(self, attr, value, g=get_ident):
        self.__dict__['__objs'].setdefault(g(), {})[attr] = value  # corpus: sink

    def __delattr__(self, attr, g=get_ident):
        try:
            del self.__dict__['__objs'][g()][attr]
        except KeyError:
            raise AttributeError(attr)
