# pydispatch/dispatcher.py: module-global connections keyed by id(sender); cleanup is wired only if
# weakref.ref(sender) succeeds, otherwise (except: pass) the entry outlives the sender unguarded.
import weakref

connections = {}
senders = {}
sendersBack = {}
Any = object()
Anonymous = object()


def _removeSender(senderkey):
    try:
        del connections[senderkey]
    except KeyError:
        pass
    try:
        del senders[senderkey]
    except Exception:
        pass


def connect(receiver, signal=Any, sender=Any, weak=True):
    senderkey = id(sender)
    if senderkey in connections:
        signals = connections[senderkey]
    else:
        connections[senderkey] = signals = {}  # corpus: sink
    if sender not in (None, Anonymous, Any):
        def remove(object, senderkey=senderkey):
            _removeSender(senderkey=senderkey)
        # Skip objects that can not be weakly referenced
        try:
            weakSender = weakref.ref(sender, remove)
            senders[senderkey] = weakSender
        except Exception:
            pass
    if signal in signals:
        receivers = signals[signal]
    else:
        receivers = signals[signal] = []
    receivers.append(receiver)


def getReceivers(sender=Any, signal=Any):
    try:
        return connections[id(sender)][signal]
    except KeyError:
        return []
