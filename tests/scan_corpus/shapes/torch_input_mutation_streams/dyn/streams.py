class SymbolicStreamState:
    def __init__(self):
        self.cur_stream_stack = []

    def cur_stream_id(self):
        stream = self.cur_stream_stack[-1]
        return id(stream.value)
