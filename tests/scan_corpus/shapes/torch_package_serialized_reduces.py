class Exporter:
    def __init__(self):
        self.serialized_reduces = {}

    def persistent_id(self, obj):
        if hasattr(obj, "__reduce_package__"):
            if self.serialized_reduces.get(id(obj)) is None:  # corpus: sink
                self.serialized_reduces[id(obj)] = ("reduce_package", id(obj), *obj.__reduce_package__(self))
            return self.serialized_reduces[id(obj)]
        return None
