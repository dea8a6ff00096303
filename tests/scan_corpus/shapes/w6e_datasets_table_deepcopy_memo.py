import copy


def _deepcopy(x, memo: dict):
    """deepcopy a regular class instance"""
    cls = x.__class__
    result = cls.__new__(cls)
    memo[id(x)] = result  # corpus: sink
    for k, v in x.__dict__.items():
        setattr(result, k, copy.deepcopy(v, memo))
    return result


class IndexedTableMixin:
    def __init__(self, table):
        self._batches = list(table)


class Table(IndexedTableMixin):
    def __init__(self, table):
        super().__init__(table)
        self.table = table

    def __deepcopy__(self, memo: dict):
        memo[id(self.table)] = self.table
        memo[id(self._batches)] = list(self._batches)
        return _deepcopy(self, memo)
