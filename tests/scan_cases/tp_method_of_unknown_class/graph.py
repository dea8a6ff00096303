# expect: ARH001 L0
# The key comes from a method of a class in another module that this one never imports; the
# receiver's class is unknown here, but no other function of the package has that name.
class Graph:
    def __init__(self):
        self._mutations = {}

    def record(self, tx, index):
        stream = tx.stream_state.current_stream_key()
        self._mutations.setdefault(stream, set()).add(index)
