from weakref import WeakValueDictionary


class Handle:
    pass


def _tid(t):
    return (id(t), t.data_ptr(), t._version)


class Ctx:
    def __init__(self):
        self.tid_to_handle = WeakValueDictionary()
        self.original = {}


def make_pack(owner):
    def pack(t):
        ctx = owner.ctx
        tid = _tid(t)
        if tid not in ctx.tid_to_handle:
            handle = Handle()
            ctx.tid_to_handle[tid] = handle  # corpus: sink
            ctx.original[handle] = t
        return ctx.tid_to_handle[tid]
    return pack
