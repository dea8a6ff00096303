# theano/misc/pkl_utils.py: PersistentNdarrayID persistent_id callable used by dump()
import pickle
import zipfile
from contextlib import closing

import numpy


class PersistentNdarrayID(object):
    def __init__(self, zip_file):
        self.zip_file = zip_file
        self.count = 0
        self.seen = {}

    def _resolve_name(self, obj):
        name = 'array_{0}'.format(self.count)
        self.count += 1
        return name

    def __call__(self, obj):
        if type(obj) is numpy.ndarray:
            if id(obj) not in self.seen:  # corpus: sink
                def write_array(f):
                    numpy.lib.format.write_array(f, obj)
                name = self._resolve_name(obj)
                zipadd(write_array, self.zip_file, name)
                self.seen[id(obj)] = 'ndarray.{0}'.format(name)  # corpus: sink
            return self.seen[id(obj)]  # corpus: sink


def dump(obj, file_handler, protocol=2, persistent_id=PersistentNdarrayID):
    with closing(zipfile.ZipFile(file_handler, 'w', zipfile.ZIP_DEFLATED,
                                 allowZip64=True)) as zip_file:
        def func(f):
            p = pickle.Pickler(f, protocol=protocol)
            p.persistent_id = persistent_id(zip_file)
            p.dump(obj)
        zipadd(func, zip_file, 'pkl')


def zipadd(func, zip_file, name):
    pass
