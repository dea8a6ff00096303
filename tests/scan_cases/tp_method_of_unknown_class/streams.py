class StreamState:
    def __init__(self):
        self.stack = []

    def current_stream_key(self):
        return id(self.stack[-1].value)
