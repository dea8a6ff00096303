from .tracing import _FAKE_ID_TO_NODE


def node_for(fake_val):
    if id(fake_val) in _FAKE_ID_TO_NODE:
        return _FAKE_ID_TO_NODE[id(fake_val)]
    return None
