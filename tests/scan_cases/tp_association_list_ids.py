# expect: ARH005 L1
# A list of (key, handler) entries whose key holds the ids of a receiver and a sender (a signal's
# receivers). The receiver is held weakly and its entries removed when it dies; the sender is held
# by nothing: once it is freed, a new sender at its id gets the old handlers.
import weakref


def _make_id(target):
    return id(target)


class Signal:
    def __init__(self):
        self.receivers = []

    def connect(self, receiver, sender):
        lookup_key = (_make_id(receiver), _make_id(sender))
        for r_key, _ in self.receivers:
            if r_key == lookup_key:
                return
        self.receivers.append((lookup_key, weakref.ref(receiver, self._remove)))

    def send(self, sender):
        sender_key = _make_id(sender)
        for (_, r_sender), ref in self.receivers:
            if r_sender == sender_key:
                receiver = ref()
                if receiver is not None:
                    receiver(sender)

    def _remove(self, ref):
        self.receivers = [(k, r) for k, r in self.receivers if r is not ref]
