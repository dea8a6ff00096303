class OffloadActivations:
    def __init__(self, max_fwd_stash_size=5):
        self.tensor_id: int = 0
        self.fwd_stash = {}  # tensor_id => (activation, ev1)
        self.max_fwd_stash_size = max_fwd_stash_size
        self.s0 = None
        self.s1 = None

        def get_tensor_id() -> int:
            self.tensor_id += 1
            return self.tensor_id

        def pack_tensor(activation):
            tensor_id = get_tensor_id()
            for id in [k for k in self.fwd_stash.keys()]:
                if id <= tensor_id - self.max_fwd_stash_size:
                    _, ev = self.fwd_stash[id]
                    self.s0.wait_event(ev)
                    del self.fwd_stash[id]
                else:
                    break
            event = self.s1.record_event()
            # Stash to keep activation alive til s1 is done
            self.fwd_stash[tensor_id] = (activation, event)  # corpus: sink
            return tensor_id

        self.pack = pack_tensor
