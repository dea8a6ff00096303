# OpenGL/contextdata.py: per-GL-context storage keyed by the native context handle
import weakref
from OpenGL import platform

storedPointers = {
    # map from contextID: { constant: value }
}
storedWeakPointers = {
    # map from contextID: WeakValueDictionary({ constant: value })
}
STORAGES = [storedPointers, storedWeakPointers]


def getContext(context=None):
    if context is None:
        context = platform.GetCurrentContext()
        if not context:
            raise RuntimeError("Attempt to retrieve context when no valid context")
    return context


def setValue(constant, value, context=None, weak=False):
    if getattr(value, '_no_cache_', False):
        return
    context = getContext(context)
    if weak:
        storage = storedWeakPointers
        cls = weakref.WeakValueDictionary
    else:
        storage = storedPointers
        cls = dict
    current = storage.get(context)  # corpus: sink
    if current is None:
        storage[context] = current = cls()  # corpus: sink
    previous = current.get(constant)
    if value is None:
        try:
            del current[constant]
        except (KeyError, TypeError, ValueError):
            pass
    else:
        current[constant] = value
    return previous


def getValue(constant, context=None):
    context = getContext(context)
    for storage in STORAGES:
        contextStorage = storage.get(context)  # corpus: sink
        if contextStorage:
            value = contextStorage.get(constant)
            if value is not None:
                return value
    return None


def cleanupContext(context=None):
    # only runs when a caller invokes it explicitly
    if context is None:
        context = platform.GetCurrentContext()
    for storage in STORAGES:
        try:
            del storedPointers[context]
        except KeyError:
            return False
        else:
            return True
