# celery/utils/dispatch/signal.py (4.x): receivers list keyed by (_make_id(receiver), _make_id(sender));
# receivers are weak + finalize-cleaned, the sender id is never pinned nor removed
import threading
import weakref
NO_RECEIVERS = object()

def _make_id(target):
    if isinstance(target, (bytes, str)):
        return target
    if hasattr(target, '__func__'):
        return id(target.__func__)
    return id(target)

def _make_lookup_key(receiver, sender, dispatch_uid):
    if dispatch_uid:
        return (dispatch_uid, _make_id(sender))
    else:
        return (_make_id(receiver), _make_id(sender))
NONE_ID = _make_id(None)

class Signal(object):
    def __init__(self, providing_args=None, use_caching=False, name=None):
        self.receivers = []
        self.lock = threading.Lock()
        self._dead_receivers = False
    def _connect_signal(self, receiver, sender, weak, dispatch_uid):
        lookup_key = _make_lookup_key(receiver, sender, dispatch_uid)
        if weak:
            receiver_object = receiver
            receiver = weakref.ref(receiver)
            weakref.finalize(receiver_object, self._remove_receiver)
        with self.lock:
            for r_key, _ in self.receivers:
                if r_key == lookup_key:
                    break
            else:
                self.receivers.append((lookup_key, receiver))
        return receiver
    def _live_receivers(self, sender):
        with self.lock:
            senderkey = _make_id(sender)
            receivers = []
            for (receiverkey, r_senderkey), receiver in self.receivers:
                if r_senderkey == NONE_ID or r_senderkey == senderkey:  # corpus: sink
                    receivers.append(receiver)
        return receivers
    def _remove_receiver(self, receiver=None):
        self._dead_receivers = True
