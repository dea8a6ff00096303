# pyqtgraph/debug.py: module-global QObjCache keyed by id(obj) of QObjects, value is a description string;
# never cleared, so a later QObject at a reused address is reported with the dead one's cached text.
import gc


class QtCore:
    class QObject:
        pass


def typeStr(obj):
    return str(type(obj))


def findObj(regex):
    return list(gc.get_objects())


QObjCache = {}
def qObjectReport(verbose=False):
    count = {}
    for obj in findObj('PyQt'):
        if isinstance(obj, QtCore.QObject):
            oid = id(obj)
            if oid not in QObjCache:
                QObjCache[oid] = typeStr(obj) + "  " + obj.objectName()  # corpus: sink
                try:
                    QObjCache[oid] += "  " + obj.parent().objectName()
                except:
                    pass
            print("check obj", oid, str(QObjCache[oid]))
    return count
