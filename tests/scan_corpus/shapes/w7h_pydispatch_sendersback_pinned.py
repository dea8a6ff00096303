# pydispatch/dispatcher.py: module-global sendersBack keyed by id(receiver); the same receiver object
# (strong callable or its safeRef) is appended to connections[senderkey][signal], which keeps it alive,
# and the safeRef's onDelete (_removeReceiver) pops the key.
connections = {}
sendersBack = {}


def _removeReceiver(receiver):
    if not sendersBack:
        return
    backKey = id(receiver)
    try:
        backSet = sendersBack.pop(backKey)
    except KeyError:
        return
    for senderkey in backSet:
        for signal in list(connections.get(senderkey, {}).keys()):
            try:
                connections[senderkey][signal].remove(receiver)
            except Exception:
                pass


def connect(receiver, signal, sender, weak=True, safeRef=None):
    if weak:
        receiver = safeRef(receiver, onDelete=_removeReceiver)
    senderkey = id(sender)
    if senderkey in connections:
        signals = connections[senderkey]
    else:
        connections[senderkey] = signals = {}
    receiverID = id(receiver)
    if signal in signals:
        receivers = signals[signal]
    else:
        receivers = signals[signal] = []
    try:
        current = sendersBack.get(receiverID)
        if current is None:
            sendersBack[receiverID] = current = []  # corpus: sink
        if senderkey not in current:
            current.append(senderkey)
    except Exception:
        pass
    receivers.append(receiver)
