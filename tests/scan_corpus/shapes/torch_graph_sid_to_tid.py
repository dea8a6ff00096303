from collections import defaultdict


def _sid(t):
    return (t.data_ptr(), t._version)


def _tid(t):
    return (id(t), t.data_ptr(), t._version)


class Ctx:
    def __init__(self):
        self.sid_to_tid = defaultdict(set)


class AllowMutation:
    def __init__(self):
        self.ctx = Ctx()

        def pack(t):
            self.ctx.sid_to_tid[_sid(t)].add(_tid(t))  # corpus: sink
            return t

        self.pack = pack
