class Transaction(object):
    def __init__(self, synchronizers=None, manager=None):
        self._resources = []
        self._manager = manager

    def _free(self):
        # end of the transaction: all data is forgotten
        if hasattr(self, '_data'):
            delattr(self, '_data')
        del self._resources[:]

    def data(self, ob):
        try:
            data = self._data
        except AttributeError:
            raise KeyError(ob)
        try:
            return data[id(ob)]  # corpus: sink
        except KeyError:
            raise KeyError(ob)

    def set_data(self, ob, ob_data):
        try:
            data = self._data
        except AttributeError:
            data = self._data = {}
        data[id(ob)] = ob_data  # corpus: sink
