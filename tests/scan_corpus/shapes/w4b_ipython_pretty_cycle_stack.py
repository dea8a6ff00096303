from io import StringIO


def pretty(obj):
    stream = StringIO()
    printer = RepresentationPrinter(stream)
    printer.pretty(obj)
    return stream.getvalue()


class RepresentationPrinter(object):
    def __init__(self, output):
        self.output = output
        self.stack = []

    def pretty(self, obj):
        obj_id = id(obj)
        cycle = obj_id in self.stack  # corpus: sink
        self.stack.append(obj_id)
        try:
            if isinstance(obj, list) and not cycle:
                self.output.write('[')
                for x in obj:
                    self.pretty(x)
                self.output.write(']')
            else:
                self.output.write(repr(obj) if not cycle else '...')
        finally:
            self.stack.pop()
