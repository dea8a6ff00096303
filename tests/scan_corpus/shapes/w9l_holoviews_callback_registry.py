class Callback:
    models = []
    extra_handles = []
    _callbacks = {}

    def __init__(self, plot, streams):
        self.plot = plot
        self.streams = streams
        self.plot_handles = {}

    def cleanup(self):
        self.plot_handles = {}
        self.plot = None
        Callback._callbacks = {k: cb for k, cb in Callback._callbacks.items()
                               if cb is not self}

    def _init_plot_handles(self):
        handles = {}
        for k, v in self.plot.handles.items():
            handles[k] = v
        self.plot_handles = handles
        requested = {}
        for h in self.models + self.extra_handles:
            if h in self.plot_handles:
                requested[h] = handles[h]
        return requested

    def initialize(self):
        handles = self._init_plot_handles()
        hash_handles = []
        for handle_name in self.models + self.extra_handles:
            if handle_name not in handles:
                continue
            hash_handles.append(handles[handle_name])
        hash_ids = [id(h) for h in hash_handles]
        cb_hash = tuple(hash_ids) + (id(type(self)),)
        if cb_hash in self._callbacks:
            cb = self._callbacks[cb_hash]
            cb.streams = list(set(cb.streams + self.streams))
            self.cleanup()
            return
        self._callbacks[cb_hash] = self  # corpus: sink
