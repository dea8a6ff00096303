import threading


def public_methods(obj):
    return [name for name in dir(obj) if name[0] != '_']


class Server(object):
    def __init__(self, registry):
        self.registry = registry
        self.id_to_obj = {'0': (None, ())}
        self.id_to_refcount = {}
        self.mutex = threading.RLock()

    def create(self, c, typeid, *args, **kwds):
        self.mutex.acquire()
        try:
            callable, exposed, method_to_typeid, proxytype = \
                      self.registry[typeid]
            if callable is None:
                obj = args[0]
            else:
                obj = callable(*args, **kwds)
            if exposed is None:
                exposed = public_methods(obj)
            ident = '%x' % id(obj)  # convert to string because xmlrpclib
            self.id_to_obj[ident] = (obj, set(exposed), method_to_typeid)  # corpus: sink
            if ident not in self.id_to_refcount:
                self.id_to_refcount[ident] = 0
            self.incref(c, ident)
            return ident, tuple(exposed)
        finally:
            self.mutex.release()

    def incref(self, c, ident):
        self.id_to_refcount[ident] += 1

    def decref(self, c, ident):
        self.id_to_refcount[ident] -= 1
        if self.id_to_refcount[ident] == 0:
            del self.id_to_obj[ident], self.id_to_refcount[ident]
