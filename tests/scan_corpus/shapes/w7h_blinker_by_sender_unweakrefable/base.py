# blinker/base.py: Signal._by_sender keyed by id(sender); cleanup is wired only when the sender
# can be weakly referenced; on TypeError the entry stays with nothing holding the sender.
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
        if sender is ANY:
            sender_id = ANY_ID
        else:
            sender_id = hashable_identity(sender)
        self.receivers.setdefault(receiver_id, receiver)
        self._by_sender[sender_id].add(receiver_id)  # corpus: sink
        self._by_receiver[receiver_id].add(sender_id)
        if sender is not ANY and sender_id not in self._weak_senders:
            try:
                sender_ref = reference(sender, self._cleanup_sender)
                sender_ref.sender_id = sender_id
            except TypeError:
                pass
            else:
                self._weak_senders.setdefault(sender_id, sender_ref)
        return receiver

    def receivers_for(self, sender):
        sender_id = hashable_identity(sender)
        if sender_id in self._by_sender:
            ids = self._by_sender[ANY_ID] | self._by_sender[sender_id]
        else:
            ids = self._by_sender[ANY_ID].copy()
        for receiver_id in ids:
            yield self.receivers.get(receiver_id)

    def _cleanup_sender(self, sender_ref):
        sender_id = sender_ref.sender_id
        self._weak_senders.pop(sender_id, None)
        for receiver_id in self._by_sender.pop(sender_id, ()):
            self._by_receiver[receiver_id].discard(sender_id)

signal = {}.setdefault  # named signals live in a module-level Namespace dict
