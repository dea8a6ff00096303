class ArgumentHandler:
    def __init__(self):
        self.dataptrs_read = set()
        self.dataptrs_written = set()

    def _handle_argument(self, value, is_write):
        data_ptr = value.data_ptr() if value.data_ptr() else id(value)
        if is_write:
            self.dataptrs_written.add(data_ptr)  # corpus: sink
        else:
            self.dataptrs_read.add(data_ptr)


def on_op(args):
    handler = ArgumentHandler()
    for a in args:
        handler._handle_argument(a, False)
    return handler.dataptrs_read
