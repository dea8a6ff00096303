# expect: ARH005 L0
# An association list whose entries hold the receiver but not the sender whose id their key holds too.


class Signal:
    def __init__(self):
        self.receivers = []

    def connect(self, receiver, sender):
        lookup_key = (id(receiver), id(sender))
        for r_key, _ in self.receivers:
            if r_key == lookup_key:
                return
        self.receivers.append((lookup_key, receiver))

    def send(self, sender):
        sender_key = id(sender)
        for (_, r_sender), receiver in self.receivers:
            if r_sender == sender_key:
                receiver(sender)
