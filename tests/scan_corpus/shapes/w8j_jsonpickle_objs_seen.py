class Pickler(object):
    def __init__(self):
        # Maps id(obj) to reference IDs
        self._objs = {}
        # Avoids garbage collection
        self._seen = []

    def reset(self):
        self._objs = {}
        self._seen = []

    def _log_ref(self, obj):
        objid = id(obj)
        is_new = objid not in self._objs
        if is_new:
            new_id = len(self._objs)
            self._objs[objid] = new_id  # corpus: sink
        return is_new

    def _mkref(self, obj):
        is_new = self._log_ref(obj)
        return is_new

    def _getref(self, obj):
        return {"py/id": self._objs.get(id(obj))}

    def _flatten_obj(self, obj):
        self._seen.append(obj)
        if self._mkref(obj):
            return self._flatten_obj_instance(obj)
        return self._getref(obj)

    def _flatten_obj_instance(self, obj):
        return {}
