# mypy/memprofile.py: local dict inferred keyed by id(obj.__dict__), id(list field); all objects pinned by objs
import gc
import sys


def find_recursive_objects(objs: list) -> None:
    pass


def collect_memory_stats():
    objs = gc.get_objects()
    find_recursive_objects(objs)

    inferred = {}
    for obj in objs:
        n = type(obj).__name__
        if hasattr(obj, "__dict__"):
            inferred[id(obj.__dict__)] = f"{n} (__dict__)"  # corpus: sink
            for x in obj.__dict__.values():
                if isinstance(x, list):
                    inferred[id(x)] = f"{n} (list)"

    freqs = {}
    memuse = {}
    for obj in objs:
        if id(obj) in inferred:
            name = inferred[id(obj)]
        else:
            name = type(obj).__name__
        freqs[name] = freqs.get(name, 0) + 1
        memuse[name] = memuse.get(name, 0) + sys.getsizeof(obj)
    return freqs, memuse
