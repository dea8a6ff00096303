# mypy/server/objgraph.py: parents keyed by id(e) outlives the call, but the returned seen dict pins e
from typing import Dict, Iterator, List, Tuple


def get_edges(o: object) -> Iterator[Tuple[object, object]]:
    if isinstance(o, dict):
        for k, v in o.items():
            yield k, v
    elif isinstance(o, (list, tuple)):
        for i, e in enumerate(o):
            yield i, e


def get_reachable_graph(root: object) -> Tuple[Dict[int, object], Dict[int, Tuple[int, object]]]:
    parents = {}
    seen = {id(root): root}
    worklist = [root]
    while worklist:
        o = worklist.pop()
        for s, e in get_edges(o):
            if id(e) in seen:
                continue
            parents[id(e)] = (id(o), s)  # corpus: sink
            seen[id(e)] = e
            worklist.append(e)
    return seen, parents


def get_path(o: object, seen: Dict[int, object],
             parents: Dict[int, Tuple[int, object]]) -> List[Tuple[object, object]]:
    path = []
    while id(o) in parents:
        pid, attr = parents[id(o)]
        o = seen[pid]
        path.append((attr, o))
    path.reverse()
    return path
