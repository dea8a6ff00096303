# expect: ARH001 L1
import weakref

from .keys import source_key


class ImportedKeyCache:
    def __init__(self):
        self._entries = {}

    def get(self, source):
        entry = self._entries.get(source_key(source))
        if entry is not None and entry[0]() is not None:
            return entry[1]
        return None

    def put(self, source, value):
        self._entries[source_key(source)] = (weakref.ref(source), value)
