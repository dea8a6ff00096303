_table = None


def _get_table():
    global _table
    if _table is not None:
        return _table
    _table = {}
    return _table


def register(fn, op):
    _get_table()[id(fn)] = op  # corpus: sink


def find(fn):
    return _get_table().get(id(fn))
