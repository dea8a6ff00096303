# pyqtgraph/debug.py: class attribute ObjTracker.allObjs keyed by id(typStr) with value None;
# typStr is held only by self.objTypes[oid], which is overwritten on the next collect(), and nothing
# ever deletes the id(typStr) key, so isObjVar() later skips any new object at that address.
import gc


def typeStr(obj):
    return str(type(obj))


def get_all_objects():
    return {id(o): o for o in gc.get_objects()}


class ObjTracker(object):
    allObjs = {}
    allObjs[id(allObjs)] = None

    def __init__(self):
        self.objTypes = {}

    @classmethod
    def isObjVar(cls, o):
        return type(o) is cls or id(o) in cls.allObjs

    def collect(self):
        objs = get_all_objects()
        refs = {}
        for k in objs:
            o = objs[k]
            oid = id(o)
            if ObjTracker.isObjVar(o):
                continue
            refs[oid] = None
            typStr = typeStr(o)
            self.objTypes[oid] = typStr
            ObjTracker.allObjs[id(typStr)] = None  # corpus: sink
        return refs
