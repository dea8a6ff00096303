# expect: none
# The same association list, each entry holding the objects whose ids its key holds: no id in it
# can be given to another object while the entry lives.


def _make_id(target):
    return id(target)


class Signal:
    def __init__(self):
        self.receivers = []

    def connect(self, receiver, sender):
        lookup_key = (id(receiver), id(sender))
        for r_key, _, _ in self.receivers:
            if r_key == lookup_key:
                return
        self.receivers.append((lookup_key, receiver, sender))

    def send(self, sender):
        sender_key = id(sender)
        for (_, r_sender), receiver, _ in self.receivers:
            if r_sender == sender_key:
                receiver(sender)
