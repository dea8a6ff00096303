import numpy as np


class LinePlot:
    def __init__(self, data, stacked):
        self.data = data
        self.stacked = stacked

    def _get_stacking_id(self):
        return id(self.data) if self.stacked else None

    @classmethod
    def _initialize_stacker(cls, ax, stacking_id, n):
        if stacking_id is None:
            return
        if not hasattr(ax, "_stacker_pos_prior"):
            ax._stacker_pos_prior = {}
        ax._stacker_pos_prior[stacking_id] = np.zeros(n)  # corpus: sink

    def plot(self, ax, y):
        self._initialize_stacker(ax, self._get_stacking_id(), len(y))
