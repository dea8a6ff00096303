# celery/utils/dispatch/signal.py (4.x): sender_receivers_cache is a WeakKeyDictionary keyed by the sender itself
import threading
import weakref

NO_RECEIVERS = object()


def _make_id(target):
    if isinstance(target, (bytes, str)):
        return target
    if hasattr(target, '__func__'):
        return id(target.__func__)
    return id(target)


NONE_ID = _make_id(None)


class Signal(object):
    def __init__(self, providing_args=None, use_caching=False, name=None):
        self.receivers = []
        self.lock = threading.Lock()
        self.use_caching = use_caching
        self.sender_receivers_cache = (
            weakref.WeakKeyDictionary() if use_caching else {}
        )
        self._dead_receivers = False

    def _live_receivers(self, sender):
        receivers = None
        if self.use_caching and not self._dead_receivers:
            receivers = self.sender_receivers_cache.get(sender)
            if receivers is NO_RECEIVERS:
                return []
        if receivers is None:
            with self.lock:
                senderkey = _make_id(sender)
                receivers = []
                for (receiverkey, r_senderkey), receiver in self.receivers:
                    if r_senderkey == NONE_ID or r_senderkey == senderkey:
                        receivers.append(receiver)
                if self.use_caching:
                    if not receivers:
                        self.sender_receivers_cache[sender] = NO_RECEIVERS
                    else:
                        self.sender_receivers_cache[sender] = receivers  # corpus: sink
        return receivers
