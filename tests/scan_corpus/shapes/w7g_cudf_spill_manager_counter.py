import threading
import weakref


class SpillManager:
    def __init__(self):
        self._lock = threading.Lock()
        self._base_buffers = weakref.WeakValueDictionary()
        self._other_buffers = weakref.WeakValueDictionary()
        self._id_counter = 0

    def add(self, buffer):
        if buffer.size > 0 and not buffer.exposed:
            with self._lock:
                self._base_buffers[self._id_counter] = buffer  # corpus: sink
                self._id_counter += 1

    def add_other(self, buffer):
        if buffer.size > 0:
            with self._lock:
                self._other_buffers[self._id_counter] = buffer
                self._id_counter += 1

    def base_buffers(self):
        with self._lock:
            return tuple(self._base_buffers.values())

    def lookup_address_range(self, ptr, size):
        ret = []
        for buf in self.base_buffers():
            if buf.is_overlapping(ptr, size):
                ret.append(buf)
        return ret


global_manager = SpillManager()
