from weakref import ref as weakref_ref


class TrackedObject(object):
    def __init__(self, instance, name, resolution_level=0, on_delete=None):
        # only a weak reference; the callback marks death, it does not remove
        self.ref = weakref_ref(instance, self.finalize)
        self.id = id(instance)
        self.name = name
        self._resolution_level = resolution_level
        self.death = None
        self.on_delete = on_delete

    def set_resolution_level(self, resolution_level):
        self._resolution_level = resolution_level

    def finalize(self, ref):
        self.death = 1.0
        if self.on_delete:
            self.on_delete()


class ClassTracker(object):
    def __init__(self):
        self.index = {}
        # 'objects' uses the id (address) as the key; dead entries are
        # replaced lazily when the id is recycled by another tracked object
        self.objects = {}
        self._keepalive = []

    def track_change(self, instance, resolution_level=0):
        tobj = self.objects[id(instance)]  # corpus: sink
        tobj.set_resolution_level(resolution_level)

    def track_object(self, instance, name=None, resolution_level=0, keep=False):
        if id(instance) in self.objects and \
                self.objects[id(instance)].ref() is not None:
            return
        name = name if name else instance.__class__.__name__
        tobj = TrackedObject(instance, name, resolution_level=resolution_level)
        self.index.setdefault(name, []).append(tobj)
        self.objects[id(instance)] = tobj  # corpus: sink
        if keep:
            self._keepalive.append(instance)
