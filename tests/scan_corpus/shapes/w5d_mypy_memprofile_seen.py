# mypy/memprofile.py: seen set of id(o) kept beside objs.append(o), which pins every object
import gc


def collect_memory_stats():
    objs = gc.get_objects()
    find_recursive_objects(objs)
    return len(objs)


def find_recursive_objects(objs: list) -> None:
    seen = {id(o) for o in objs}

    def visit(o: object) -> None:
        if id(o) not in seen:
            objs.append(o)
            seen.add(id(o))  # corpus: sink

    for obj in objs[:]:
        if type(obj) is dict:
            for key, val in obj.items():
                visit(key)
                visit(val)
        if type(obj) in (list, tuple, set):
            for x in obj:
                visit(x)
        if hasattr(obj, "__slots__"):
            for base in type.mro(type(obj)):
                for slot in getattr(base, "__slots__", ()):
                    if hasattr(obj, slot):
                        visit(getattr(obj, slot))
