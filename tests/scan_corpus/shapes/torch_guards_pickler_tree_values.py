import pickle


class GuardsStatePickler(pickle.Pickler):
    def __init__(self, buf, guard_tree_values, empty_values, missing_values):
        super().__init__(buf)
        self.guard_tree_values = guard_tree_values
        self.empty_values = empty_values
        self.missing_values = missing_values

    def reducer_override(self, obj):
        if id(obj) in self.empty_values:
            return type(obj).__new__, (type(obj),)
        if id(obj) in self.missing_values:
            return object, ()
        if hasattr(obj, "data_ptr"):
            if id(obj) not in self.guard_tree_values:  # corpus: sink
                return object, ()
        return NotImplemented
