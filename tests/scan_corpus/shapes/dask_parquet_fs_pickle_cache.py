# dask/dataframe/dask_expr/io/parquet.py
import pickle
import weakref


class FragmentWrapper:
    _filesystems = weakref.WeakValueDictionary()
    _filesystem_pickle_cache = (-1, None)

    def __init__(self, fragment, filesystem, file_size=None, fragment_packed=None):
        self._fragment = fragment
        self._fragment_packed = fragment_packed
        self._file_size = file_size
        self._fs = None
        self._filesystem = filesystem

    def pack(self):
        if self._fragment_packed is None:
            fs = self._filesystem or self._fragment.filesystem
            assert fs.equals(self._fragment.filesystem)
            if self._filesystem_pickle_cache[0] != id(fs):  # corpus: sink
                FragmentWrapper._filesystem_pickle_cache = (id(fs), pickle.dumps(fs))  # corpus: sink
            fs_pkl = FragmentWrapper._filesystem_pickle_cache[1]
            self._fragment_packed = (self._fragment.path, fs_pkl, self._file_size)
        self._fs = self._fragment = None

    def unpack(self):
        if self._fragment is None:
            path, fs_raw, file_size = self._fragment_packed
            fs = FragmentWrapper._filesystems.get(fs_raw)
            if fs is None:
                fs = pickle.loads(fs_raw)
                FragmentWrapper._filesystems[fs_raw] = fs
            self._fs = fs
        self._fragment_packed = None
