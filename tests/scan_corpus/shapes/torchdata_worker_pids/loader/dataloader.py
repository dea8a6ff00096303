from . import signal_handling


class LoaderIter:
    def __init__(self, workers):
        self._workers = workers
        signal_handling.set_worker_pids(id(self), tuple(w.pid for w in workers))

    def _shutdown(self):
        signal_handling.remove_worker_pids(id(self))
