import time


class timeit:
    _REG = {}
    _MARKS = {}

    def __init__(self, name: str, *, sync: bool = False):
        self.name = name
        self._sync = sync

    @classmethod
    def _record(cls, name: str, elapsed: float) -> None:
        val = cls._REG.setdefault(name, [0.0, 0.0, 0])
        count = val[2]
        N = count + 1
        val[0] = val[0] * (count / N) + elapsed / N
        val[1] += elapsed
        val[2] = N

    @classmethod
    def mark_start(cls, name: str) -> None:
        """Mark the start of a named timed event."""
        cls._MARKS[name] = time.time()  # corpus: sink

    @classmethod
    def mark_end(cls, name: str) -> None:
        """Mark the end of a named timed event and record its elapsed time."""
        cls._record(name, time.time() - cls._MARKS.pop(name))
