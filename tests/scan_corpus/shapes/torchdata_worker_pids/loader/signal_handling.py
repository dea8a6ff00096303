# Stands for the C++ registry behind torch._C._set_worker_pids (a map keyed by the first argument).
_worker_pids = {}


def set_worker_pids(key, pids):
    if key in _worker_pids:  # corpus: sink
        raise RuntimeError("worker pids already set for this loader")
    _worker_pids[key] = tuple(pids)


def remove_worker_pids(key):
    _worker_pids.pop(key, None)
