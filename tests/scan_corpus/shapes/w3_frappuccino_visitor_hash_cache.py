# frappuccino/visitor.py: BaseVisitor._hash_cache, visit results keyed by id(node)
class BaseVisitor:
    def __init__(self, name, *, logger=None):
        self.name = name
        self.visited = list()
        self._hash_cache = dict()
        self.rejected = list()

    def visit(self, node):
        if id(node) in [id(x) for x in self.visited]:
            return self._hash_cache.get(id(node))  # corpus: sink
        else:
            self.visited.append(node)
        mod = getattr(node, "__module__", None)
        if mod and not mod.startswith(self.name):
            self.rejected.append(node)
            return
        type_ = type(node).__name__
        visitor = getattr(self, "visit_" + type_, self.visit_unknown)
        visited_hash = visitor(node)
        self._hash_cache[id(node)] = visited_hash  # corpus: sink
        return visited_hash

    def visit_unknown(self, unknown):
        self.rejected.append(unknown)
