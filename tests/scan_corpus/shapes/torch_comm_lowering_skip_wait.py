class _Virtual:
    graph = None


V = _Virtual()
_bufs_to_skip_wait = set()


def mark_as_skip_wait(x):
    _bufs_to_skip_wait.add((id(V.graph), x.get_name()))  # corpus: sink


def should_skip_wait(x):
    return (id(V.graph), x.get_name()) in _bufs_to_skip_wait
