from gc import get_referents


class _Edge(object):
    __slots__ = ('src', 'dst', 'label', 'group')

    def __init__(self, src, dst, label):
        self.src = src
        self.dst = dst
        self.label = label
        self.group = None

    def __hash__(self):
        return (self.src, self.dst, self.label).__hash__()

    def __eq__(self, other):
        return self.__hash__() == other.__hash__()


class ReferenceGraph(object):
    def __init__(self, objects):
        # the graph keeps every object alive for as long as its edges exist
        self.objects = list(objects)
        self.edges = None
        self._get_edges()

    def _get_edges(self):
        idset = set([id(x) for x in self.objects])
        self.edges = set([])
        for n in self.objects:
            refset = set([id(x) for x in get_referents(n)])
            for ref in refset.intersection(idset):
                label = ''
                self.edges.add(_Edge(id(n), ref, label))  # corpus: sink
