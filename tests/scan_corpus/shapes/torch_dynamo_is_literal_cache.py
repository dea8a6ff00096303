class Constant:
    @staticmethod
    def is_literal(obj, cache=None):
        if cache is None:
            cache = {}
        if id(obj) in cache:
            return True
        if type(obj) in (list, tuple, set, frozenset):
            cache[id(obj)] = obj  # corpus: sink
            return all(Constant.is_literal(x, cache) for x in obj)
        return type(obj) in (int, float, str, bool)
