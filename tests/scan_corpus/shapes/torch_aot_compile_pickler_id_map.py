import pickle


class ExternalPickler(pickle.Pickler):
    def __init__(self, buf, external_data):
        super().__init__(buf)
        self.external_data = external_data
        self.id_map = {id(value): key for key, value in external_data.items()}

    def persistent_id(self, obj):
        if id(obj) in self.id_map:
            return self.id_map[id(obj)]  # corpus: sink
        return None
