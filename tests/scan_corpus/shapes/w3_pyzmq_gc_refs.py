# zmq/utils/garbage.py: GarbageCollector.refs, zero-copy buffers keyed by id of the stored gcref tuple
import struct
from collections import namedtuple
from threading import Thread

gcref = namedtuple('gcref', ['obj', 'event'])


class GarbageCollectorThread(Thread):
    def __init__(self, gc):
        super().__init__()
        self.gc = gc

    def run(self):
        s = self.gc.context.socket()
        while True:
            msg = s.recv()
            if msg == b'DIE':
                break
            fmt = 'L' if len(msg) == 4 else 'Q'
            key = struct.unpack(fmt, msg)[0]
            tup = self.gc.refs.pop(key, None)  # corpus: sink
            if tup and tup.event:
                tup.event.set()
            del tup


class GarbageCollector(object):
    def __init__(self, context=None):
        self.refs = {}

    def _stop(self):
        self.refs.clear()

    def store(self, obj, event=None):
        tup = gcref(obj, event)
        theid = id(tup)  # corpus: sink
        self.refs[theid] = tup  # corpus: sink
        return theid


gc = GarbageCollector()
