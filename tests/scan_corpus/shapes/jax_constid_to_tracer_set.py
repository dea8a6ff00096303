from weakref import WeakValueDictionary


class Frame:
    def __init__(self):
        self.constid_to_tracer = WeakValueDictionary()
        self.constvar_to_val = {}


def inline_consts(trace, constvars, consts, make_tracer):
    for v, c in zip(constvars, consts):
        tracer = make_tracer(trace, v)
        trace.frame.constid_to_tracer[id(c)] = tracer  # corpus: sink
        trace.frame.constvar_to_val[v] = c
