from collections.abc import MutableMapping
from weakref import ref


def _remover(key_id, id_dict_ref):
    def callback(wr, id_dict_ref=id_dict_ref):
        id_dict = id_dict_ref()
        if id_dict is not None:
            id_dict.data.pop(key_id, None)

    return callback


class WeakIDDict(MutableMapping):
    def __init__(self, dict=None):
        self.data = {}

    def __delitem__(self, key):
        del self.data[id(key)]

    def __getitem__(self, key):
        return self.data[id(key)][1]()

    def __len__(self):
        return len(self.data)

    def __iter__(self):
        for id_key in self.data:
            key = self.data[id_key][0]()
            if key is not None:
                yield key


class WeakIDKeyDict(WeakIDDict):
    def __getitem__(self, key):
        return self.data[id(key)][1]

    def __setitem__(self, key, value):
        self.data[id(key)] = (ref(key, _remover(id(key), ref(self))), value)  # corpus: sink
