# pyqtgraph/debug.py: class attribute ObjTracker.allObjs keyed by id(self) and id() of the tracker's own
# dicts; __del__ deletes exactly those keys when the tracker is released.
class ObjTracker(object):
    allObjs = {}
    allObjs[id(allObjs)] = None

    def __init__(self):
        self.startRefs = {}
        self.startCount = {}
        self.newRefs = {}
        self.persistentRefs = {}
        self.objTypes = {}
        ObjTracker.allObjs[id(self)] = None  # corpus: sink
        self.objs = [self.__dict__, self.startRefs, self.startCount, self.newRefs, self.persistentRefs, self.objTypes]
        self.objs.append(self.objs)
        for v in self.objs:
            ObjTracker.allObjs[id(v)] = None

    def __del__(self):
        self.startRefs.clear()
        self.startCount.clear()
        self.newRefs.clear()
        self.persistentRefs.clear()
        del ObjTracker.allObjs[id(self)]
        for v in self.objs:
            del ObjTracker.allObjs[id(v)]

    @classmethod
    def isObjVar(cls, o):
        return type(o) is cls or id(o) in cls.allObjs
