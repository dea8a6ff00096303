def _repr_pprint(obj, p, cycle):
    p.text(repr(obj))


class RepresentationPrinter(object):
    def __init__(self, output, singleton_pprinters=None):
        self.output = output
        self.stack = []
        if singleton_pprinters is None:
            singleton_pprinters = _singleton_pprinters.copy()
        self.singleton_pprinters = singleton_pprinters

    def pretty(self, obj):
        obj_id = id(obj)
        cycle = obj_id in self.stack
        self.stack.append(obj_id)
        try:
            try:
                printer = self.singleton_pprinters[obj_id]  # corpus: sink
            except (TypeError, KeyError):
                pass
            else:
                return printer(obj, self, cycle)
            return _repr_pprint(obj, self, cycle)
        finally:
            self.stack.pop()

    def text(self, s):
        self.output.write(s)


#: printers for the default singletons
_singleton_pprinters = dict.fromkeys(map(id, [None, True, False, Ellipsis,
                                      NotImplemented]), _repr_pprint)
