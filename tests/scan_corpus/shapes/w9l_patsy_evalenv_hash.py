class EvalEnvironment(object):
    def __init__(self, namespaces, flags=0):
        self._namespaces = list(namespaces)
        self.flags = flags

    def with_outer_namespace(self, outer_namespace):
        return self.__class__(self._namespaces + [outer_namespace],
                              self.flags)

    def _namespace_ids(self):
        return [id(n) for n in self._namespaces]

    def __eq__(self, other):
        return (isinstance(other, EvalEnvironment)
                and self.flags == other.flags
                and self._namespace_ids() == other._namespace_ids())

    def __ne__(self, other):
        return not self == other

    def __hash__(self):
        return hash((EvalEnvironment,
                     self.flags,
                     tuple(self._namespace_ids())))  # corpus: sink
