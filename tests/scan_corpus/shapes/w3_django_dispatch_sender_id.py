# django/dispatch/dispatcher.py: Signal.receivers, lookup keys built from id(receiver) and id(sender)
import weakref
from django.dispatch import saferef

WEAKREF_TYPES = (weakref.ReferenceType, saferef.BoundMethodWeakref)


def _make_id(target):
    if hasattr(target, 'im_func'):
        return (id(target.im_self), id(target.im_func))
    return id(target)


class Signal(object):
    def __init__(self, providing_args=None):
        self.receivers = []

    def connect(self, receiver, sender=None, weak=True, dispatch_uid=None):
        if dispatch_uid:
            lookup_key = (dispatch_uid, _make_id(sender))  # corpus: sink
        else:
            lookup_key = (_make_id(receiver), _make_id(sender))  # corpus: sink
        if weak:
            receiver = saferef.safeRef(receiver, onDelete=self._remove_receiver)
        for r_key, _ in self.receivers:
            if r_key == lookup_key:
                break
        else:
            self.receivers.append((lookup_key, receiver))

    def disconnect(self, receiver=None, sender=None, weak=True, dispatch_uid=None):
        if dispatch_uid:
            lookup_key = (dispatch_uid, _make_id(sender))
        else:
            lookup_key = (_make_id(receiver), _make_id(sender))
        for index in range(len(self.receivers)):
            (r_key, _) = self.receivers[index]
            if r_key == lookup_key:
                del self.receivers[index]
                break

    def send(self, sender, **named):
        responses = []
        for receiver in self._live_receivers(_make_id(sender)):  # corpus: sink
            responses.append((receiver, receiver(signal=self, sender=sender, **named)))
        return responses

    def _live_receivers(self, senderkey):
        none_senderkey = _make_id(None)
        for (receiverkey, r_senderkey), receiver in self.receivers:
            if r_senderkey == none_senderkey or r_senderkey == senderkey:
                if isinstance(receiver, WEAKREF_TYPES):
                    receiver = receiver()
                    if receiver is not None:
                        yield receiver
                else:
                    yield receiver

    def _remove_receiver(self, receiver):
        to_remove = []
        for key, connected_receiver in self.receivers:
            if connected_receiver == receiver:
                to_remove.append(key)
        for key in to_remove:
            for idx, (r_key, _) in enumerate(self.receivers):
                if r_key == key:
                    del self.receivers[idx]
