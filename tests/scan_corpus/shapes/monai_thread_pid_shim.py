import threading


class ProcessLikeThread(threading.Thread):
    @property
    def pid(self):
        return id(self)  # corpus: sink
