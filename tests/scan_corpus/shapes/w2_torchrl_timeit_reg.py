import time


class timeit:
    _REG = {}

    def __init__(self, name: str, *, sync: bool = False):
        self.name = name
        self._sync = sync

    def __enter__(self):
        self.t0 = time.time()
        return self

    def elapsed(self) -> float:
        return time.time() - self.t0

    @classmethod
    def _record(cls, name: str, elapsed: float) -> None:
        val = cls._REG.setdefault(name, [0.0, 0.0, 0])  # corpus: sink
        count = val[2]
        N = count + 1
        val[0] = val[0] * (count / N) + elapsed / N
        val[1] += elapsed
        val[2] = N

    def __exit__(self, exc_type, exc_val, exc_tb) -> None:
        self._record(self.name, self.elapsed())
