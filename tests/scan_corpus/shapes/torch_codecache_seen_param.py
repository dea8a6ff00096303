class Checker:
    def check(self, obj, seen=None):
        if seen is None:
            seen = set()
        obj_id = id(obj)
        if obj_id in seen:  # corpus: sink
            return
        seen.add(obj_id)
        for child in getattr(obj, "children", []):
            self.check(child, seen)
