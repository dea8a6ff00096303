# dask/tokenize.py
import uuid

_seen_objects = set()


def normalize_object(o):
    method = getattr(o, "__dask_tokenize__", None)
    if method is not None and not isinstance(o, type):
        return method()
    if type(o) is object:
        return _normalize_pure_object(o)
    return uuid.uuid4().hex


def _normalize_pure_object(o: object) -> tuple[str, int]:
    # Idempotent, but not deterministic. Make sure that the id is not reused.
    _seen_objects.add(o)
    return "object", id(o)  # corpus: sink


def tokenize(*args):
    # the token (made from id(o)) names graph keys and cached expressions
    return str(tuple(normalize_object(a) for a in args))
