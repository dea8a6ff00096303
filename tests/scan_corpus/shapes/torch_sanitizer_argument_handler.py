class ArgumentHandler:
    def __init__(self):
        self.dataptrs_read = set()
        self.dataptrs_written = set()
        self.tensor_aliases = {}

    def _handle_argument(self, value, is_write, name=None):
        data_ptr = value.data_ptr() if value.data_ptr() else id(value)
        if is_write:
            self.dataptrs_written.add(data_ptr)
        else:
            self.dataptrs_read.add(data_ptr)
        self.tensor_aliases.setdefault(data_ptr, [])  # corpus: sink
        if name is not None:
            self.tensor_aliases[data_ptr].append(name)


def on_op(args):
    handler = ArgumentHandler()
    for a in args:
        handler._handle_argument(a, False)
    return handler.tensor_aliases
