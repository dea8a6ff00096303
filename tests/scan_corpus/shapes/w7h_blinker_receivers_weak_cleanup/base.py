# blinker/base.py: Signal.receivers keyed by id-based identity; the value is either the receiver
# itself (weak=False, pins it) or a weakref whose callback pops the entry when the receiver dies.
from collections import defaultdict

from _utilities import hashable_identity, reference

ANY = object()
ANY_ID = 0


class Signal:
    def __init__(self, doc=None):
        self.receivers = {}
        self._by_receiver = defaultdict(set)
        self._by_sender = defaultdict(set)
        self._weak_senders = {}

    def connect(self, receiver, sender=ANY, weak=True):
        receiver_id = hashable_identity(receiver)
        if weak:
            receiver_ref = reference(receiver, self._cleanup_receiver)
            receiver_ref.receiver_id = receiver_id
        else:
            receiver_ref = receiver
        sender_id = ANY_ID
        self.receivers.setdefault(receiver_id, receiver_ref)  # corpus: sink
        self._by_receiver[receiver_id].add(sender_id)
        return receiver

    def _disconnect(self, receiver_id, sender_id):
        if sender_id == ANY_ID:
            if self._by_receiver.pop(receiver_id, False):
                for bucket in self._by_sender.values():
                    bucket.discard(receiver_id)
            self.receivers.pop(receiver_id, None)

    def _cleanup_receiver(self, receiver_ref):
        self._disconnect(receiver_ref.receiver_id, ANY_ID)


class Namespace(dict):
    def signal(self, name, doc=None):
        try:
            return self[name]
        except KeyError:
            return self.setdefault(name, Signal(doc))


signal = Namespace().signal
