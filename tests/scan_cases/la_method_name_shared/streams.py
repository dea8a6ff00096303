import itertools

_numbers = itertools.count()


class StreamState:
    def __init__(self):
        self.stack = []

    def current_stream_key(self):
        return id(self.stack[-1].value)


class NumberedStreams:
    def __init__(self):
        self.number = next(_numbers)

    def current_stream_key(self):
        return self.number
