class LinePlot:
    def __init__(self):
        self._ts_index = {}

    def _ts_plot(self, ax, data):
        self._ts_index[id(ax)] = data.index  # corpus: sink

    def _index_for(self, ax):
        return self._ts_index[id(ax)]
