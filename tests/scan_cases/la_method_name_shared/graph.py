# expect: none
# Two classes of the package define current_stream_key: a call on an object of unknown class is
# not resolved by its name alone (it may be the one returning a counter).
class Graph:
    def __init__(self):
        self._mutations = {}

    def record(self, tx, index):
        stream = tx.stream_state.current_stream_key()
        self._mutations.setdefault(stream, set()).add(index)
