import types

frametable = {}
dicttable = {}
codetable = {}
tracebacktable = {}


def wrap_frame(frame):
    fid = id(frame)
    frametable[fid] = frame  # corpus: sink
    return fid


def wrap_info(info):
    if info is None:
        return None
    traceback = info[2]
    assert isinstance(traceback, types.TracebackType)
    traceback_id = id(traceback)
    tracebacktable[traceback_id] = traceback
    return (info[0], info[1], traceback_id)


class IdbAdapter:
    def __init__(self, idb):
        self.idb = idb

    def set_next(self, fid):
        frame = frametable[fid]
        self.idb.set_next(frame)

    def frame_globals(self, fid):
        frame = frametable[fid]
        dict = frame.f_globals
        did = id(dict)
        dicttable[did] = dict
        return did
