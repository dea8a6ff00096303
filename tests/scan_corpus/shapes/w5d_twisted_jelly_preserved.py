# twisted/spread/jelly.py: _Jellier.preserved keyed by id(object); the object is pinned in self.cooker
import copy
reference_atom = b"reference"
dereference_atom = b"dereference"

class _Jellier:
    """(Internal) This class manages state for a call to jelly()"""
    def __init__(self, taster, persistentStore, invoker):
        self.taster = taster
        self.preserved = {}
        self.cooked = {}
        self.cooker = {}
        self._ref_id = 1
    def _cook(self, object):
        aList = self.preserved[id(object)]
        newList = copy.copy(aList)
        refid = self._ref_id
        self._ref_id = self._ref_id + 1
        aList[:] = [reference_atom, refid, newList]
        self.cooked[id(object)] = [dereference_atom, refid]
        return aList
    def prepare(self, object):
        self.preserved[id(object)] = []  # corpus: sink
        self.cooker[id(object)] = object
        return []
    def preserve(self, object, sexp):
        if id(object) in self.cooked:
            self.preserved[id(object)][2] = sexp
            sexp = self.preserved[id(object)]
        else:
            self.preserved[id(object)] = sexp
        return sexp
    def _checkMutable(self, obj):
        objId = id(obj)
        if objId in self.cooked:
            return self.cooked[objId]
        if objId in self.preserved:
            self._cook(obj)
            return self.cooked[objId]

def getInstanceState(inst, jellier):
    if hasattr(inst, "__getstate__"):
        state = inst.__getstate__()
    else:
        state = inst.__dict__
    sxp = jellier.prepare(inst)
    sxp.extend([type(inst).__qualname__.encode("utf-8"), state])
    return jellier.preserve(inst, sxp)
