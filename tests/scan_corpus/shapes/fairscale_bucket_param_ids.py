class Bucket:
    def __init__(self):
        self._params = []
        self._param_ids = []

    def add_param(self, param):
        assert id(param) not in self._param_ids, "checked in twice"
        self._params.append(param)
        self._param_ids.append(id(param))  # corpus: sink

    def can_add(self, param):
        return id(param) not in self._param_ids
