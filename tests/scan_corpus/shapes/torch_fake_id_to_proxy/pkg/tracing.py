_FAKE_ID_TO_NODE: dict = {}


class Tracer:
    def __init__(self):
        self.tracked = {}

    def dump(self):
        _FAKE_ID_TO_NODE.clear()
        for fake, entry in self.tracked.items():
            _FAKE_ID_TO_NODE[id(fake)] = entry.node  # corpus: sink
