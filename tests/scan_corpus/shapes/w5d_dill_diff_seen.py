# dill/__diff.py: whats_changed keeps a `seen` dict keyed by id(obj) for one top-level call
memo = {}
dont_memo = set()


def get_attrs(obj):
    try:
        return obj.__dict__
    except Exception:
        return


def whats_changed(obj, seen=None, simple=False, first=True):
    if first:
        if seen is None:
            seen = {}
    obj_id = id(obj)
    if obj_id in seen:  # corpus: sink
        if simple:
            return any(seen[obj_id])
        return seen[obj_id]
    if obj_id in dont_memo:
        seen[obj_id] = [{}, False]
        return seen[obj_id]
    elif obj_id not in memo:
        return True
    seen[obj_id] = ({}, False)
    attrs = get_attrs(obj)
    changed = {}
    if attrs is not None:
        obj_get = memo[obj_id][0].get
        for key, o in attrs.items():
            if id(o) != obj_get(key, None) or whats_changed(o, seen, True, False):
                changed[key] = o
    seen[obj_id] = changed, False
    return changed, False
