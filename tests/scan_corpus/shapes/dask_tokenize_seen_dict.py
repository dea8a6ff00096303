# dask/tokenize.py
import threading

tokenize_lock = threading.RLock()
_SEEN: dict[int, tuple[int, object]] = {}


def tokenize(*args):
    global _SEEN
    with tokenize_lock:
        seen_before, _SEEN = _SEEN, {}
        try:
            return _normalize_seq_func(args)
        finally:
            _SEEN = seen_before


def normalize_dict(d):
    with tokenize_lock:
        if id(d) in _SEEN:
            return "__seen", _SEEN[id(d)][0]
        _SEEN[id(d)] = len(_SEEN), d  # corpus: sink
        try:
            return "dict", _normalize_seq_func(
                sorted(d.items(), key=lambda kv: str(kv[0]))
            )
        finally:
            _SEEN.pop(id(d), None)


def _normalize_seq_func(seq):
    with tokenize_lock:
        if id(seq) in _SEEN:
            return "__seen", _SEEN[id(seq)][0]
        _SEEN[id(seq)] = len(_SEEN), seq
        try:
            return tuple(seq)
        finally:
            del _SEEN[id(seq)]
