class _MetaObject(object):
    __slots__ = ('size', 'id', 'type', 'str', 'group', 'cycle')

    def __init__(self):
        self.cycle = False


class ReferenceGraph(object):
    def __init__(self, objects):
        # strong references to all objects, alongside their metadata
        self.objects = list(objects)
        self.edges = set()
        self._annotate_objects()

    def _annotate_objects(self):
        self.metadata = []
        for obj in self.objects:
            md = _MetaObject()
            md.id = id(obj)
            self.metadata.append(md)

    def _annotate_groups(self):
        g = {}
        for x in self.metadata:
            g[x.id] = x  # corpus: sink
        idx = 0
        for x in self.metadata:
            if not hasattr(x, 'group'):
                x.group = idx
                idx += 1
            neighbors = set()
            for e in self.edges:
                if e.src == x.id:
                    neighbors.add(e.dst)
            for nb in neighbors:
                g[nb].group = min(x.group, getattr(g[nb], 'group', idx))
        self._max_group = idx
