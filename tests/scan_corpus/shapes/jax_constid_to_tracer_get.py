from weakref import WeakValueDictionary


class Frame:
    def __init__(self):
        self.constid_to_tracer = WeakValueDictionary()


class Trace:
    def __init__(self):
        self.frame = Frame()

    def new_const(self, c, make):
        tracer = self.frame.constid_to_tracer.get(id(c))  # corpus: sink
        if tracer is None:
            tracer = make(c)
            self.frame.constid_to_tracer[id(c)] = tracer
        return tracer
