_singleton_pprinters = dict.fromkeys(map(id, [None, True, False, Ellipsis,
                                      NotImplemented]), lambda obj, p, cycle: p.text(repr(obj)))


class BaseFormatter(object):
    print_method = '__repr__'

    def __init__(self):
        # Maps the IDs of the builtin singleton objects to the format functions.
        self.singleton_printers = self._singleton_printers_default()
        self.type_printers = {}

    def _singleton_printers_default(self):
        return {}

    def __call__(self, obj):
        obj_id = id(obj)
        try:
            printer = self.singleton_printers[obj_id]  # corpus: sink
        except (TypeError, KeyError):
            pass
        else:
            return printer(obj)
        return None


class PlainTextFormatter(BaseFormatter):
    # Use the default pretty printers from IPython.lib.pretty.
    def _singleton_printers_default(self):
        return _singleton_pprinters.copy()
