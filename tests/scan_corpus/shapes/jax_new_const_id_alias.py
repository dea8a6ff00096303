class Trace:
    def __init__(self, frame):
        self.frame = frame

    def _new_const(self, aval, c, make):
        id_c = id(c)
        if isinstance(c, (int, float)):
            return ("literal", c)
        tracer = make(aval)
        self.frame.constid_to_tracer[id_c] = tracer  # corpus: sink
        return tracer
