ObjID = int


class SerializationError(ValueError):
    pass


class Serializer:
    def __init__(self, *, references=set(), deferred=True, check_circular=True):
        self._references = {id(obj): obj.ref for obj in references}
        self._deferred = deferred
        self._check_circular = check_circular
        self._circular = {}
        self._buffers = []

    def get_ref(self, obj):
        return self._references.get(id(obj))

    def encode(self, obj):
        ref = self.get_ref(obj)
        if ref is not None:
            return ref

        ident = id(obj)
        if self._check_circular and ident in self._circular:
            self.error("circular reference")

        self._circular[ident] = obj  # corpus: sink
        try:
            return self._encode(obj)
        finally:
            if ident in self._circular:
                del self._circular[ident]

    def _encode(self, obj):
        if isinstance(obj, list):
            return [self.encode(item) for item in obj]
        return obj

    def error(self, message):
        raise SerializationError(message)
