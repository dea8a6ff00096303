# A one-entry cache: the id of the last filesystem is kept with its pickle, not the filesystem.
# expect: ARH005 L0
import pickle


class Wrapper:
    _pickle_cache = (-1, None)

    def pack(self, fs):
        if self._pickle_cache[0] != id(fs):
            Wrapper._pickle_cache = (id(fs), pickle.dumps(fs))
        return Wrapper._pickle_cache[1]
