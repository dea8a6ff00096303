import ast
import copy
from types import ModuleType


class DependenciesFinder(ast.NodeVisitor):

    def __init__(self, name, globals, nonlocals, src) -> None:
        super().__init__()
        self.name = name
        # This function's __globals__ dict.
        self.globals = globals
        self.nonlocals = nonlocals
        #  (var_name, id(__globals__)) -> (var_value, __globals__).
        self.used_global_vals = {}
        self.visiting_arg_default_value = False
        self.local_names = set()

    def visit_Name(self, node):
        if type(node.ctx) is ast.Store:
            return node.id
        if node.id in self.local_names:
            return None

        def name_lookup(name):
            val = self.globals.get(name, None)
            if val is not None:
                return val, self.globals
            val = self.nonlocals.get(name, None)
            if val is not None:
                return val, self.nonlocals
            return None, None

        val, var_dict = name_lookup(node.id)
        if (val is not None and not self.visiting_arg_default_value and type(val) is not ModuleType):
            self.used_global_vals[(node.id, id(var_dict))] = (copy.copy(val), var_dict)  # corpus: sink
        return val


class JITFunction:

    @property
    def cache_key(self):
        dependencies_finder = DependenciesFinder(self.__name__, self.__globals__, {}, self.src)
        dependencies_finder.visit(ast.parse(self.src))
        self.used_global_vals = dict(sorted(dependencies_finder.used_global_vals.items()))
        return dependencies_finder.name
