import dataclasses
from time import time


@dataclasses.dataclass
class QueueStats:
    pending: dict = dataclasses.field(default_factory=dict)


_queue_stats = QueueStats()


class TrackedPool:
    def _record_dequeue(self, f):
        stats = _queue_stats
        return stats.pending.pop(id(f), None)

    def _record_enqueue(self, f):
        stats = _queue_stats
        stats.pending[id(f)] = time()  # corpus: sink
