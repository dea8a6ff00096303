# twisted/python/rebuild.py: module-global _modDictIDMap keyed by id(module.__dict__), value = the module
import time
from importlib import reload

lastRebuild = time.time()

_modDictIDMap = {}


def latestFunction(oldFunc):
    dictID = id(oldFunc.__globals__)
    module = _modDictIDMap.get(dictID)
    if module is None:
        return oldFunc
    return getattr(module, oldFunc.__name__)


def rebuild(module, doLog=1):
    global lastRebuild
    lastRebuild = time.time()
    d = module.__dict__
    _modDictIDMap[id(d)] = module  # corpus: sink
    functions = {}
    for k, v in d.items():
        if callable(v) and getattr(v, '__globals__', None) is module.__dict__:
            functions[v] = 1
    reload(module)
    return module
