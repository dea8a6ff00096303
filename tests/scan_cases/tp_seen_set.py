# expect: ARH001 L0
class UploadTracker:
    """Skips uploading a buffer twice: remembers the addresses it has sent."""

    def __init__(self):
        self._sent = set()

    def upload(self, buf, send):
        ptr = buf.data_ptr()
        if ptr in self._sent:
            return
        send(buf)
        self._sent.add(ptr)
