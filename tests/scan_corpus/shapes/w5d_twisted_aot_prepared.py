# twisted/persisted/aot.py: AOTJellier.prepared keyed by id(obj) for a whole jelly; value is the AO Ref, not obj

class Ref:
    def __init__(self):
        self.refnum = None
        self.obj = None
    def setRef(self, num):
        self.refnum = num
    def setObj(self, obj):
        self.obj = obj

class Deref:
    def __init__(self, num):
        self.refnum = num

class Instance:
    def __init__(self, className, state):
        self.klass, self.state = className, state

class AOTJellier:
    def __init__(self):
        self.prepared = {}
        self._ref_id = 0
    def prepareForRef(self, aoref, object):
        self.prepared[id(object)] = aoref  # corpus: sink
    def jellyToAO(self, obj):
        objType = type(obj)
        if objType in (bool, bytes, str, int, float, type(None)):
            retval = obj
        else:
            if id(obj) in self.prepared:
                oldRef = self.prepared[id(obj)]
                if not oldRef.refnum:
                    self._ref_id = self._ref_id + 1
                    oldRef.setRef(self._ref_id)
                return Deref(oldRef.refnum)
            retval = Ref()
            def _stateFrom(state):
                retval.setObj(Instance(objType.__qualname__, self.jellyToAO(state)))
            self.prepareForRef(retval, obj)
            if objType is list:
                retval.setObj([self.jellyToAO(o) for o in obj])
            elif hasattr(obj, "__getstate__"):
                _stateFrom(obj.__getstate__())
        return retval
    def jelly(self, obj):
        return self.jellyToAO(obj)

def jellyToAOT(obj):
    return AOTJellier().jelly(obj)
