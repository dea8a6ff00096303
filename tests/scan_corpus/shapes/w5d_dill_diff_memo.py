# dill/__diff.py: module-global memo keyed by id(obj), object pinned in id_to_obj
memo = {}
id_to_obj = {}
dont_memo = set(id(i) for i in (memo, id_to_obj))


def get_attrs(obj):
    try:
        return obj.__dict__
    except Exception:
        return


def memorise(obj, force=False):
    obj_id = id(obj)
    if obj_id in memo and not force or obj_id in dont_memo:
        return
    id_ = id
    g = get_attrs(obj)
    if g is None:
        attrs_id = None
    else:
        attrs_id = dict((key, id_(value)) for key, value in g.items())
    seq_id = None
    memo[obj_id] = attrs_id, seq_id  # corpus: sink
    id_to_obj[obj_id] = obj
    if g is not None:
        [memorise(value) for key, value in g.items()]


def release_gone(getrefcount=lambda x: 0):
    itop, mp, src = id_to_obj.pop, memo.pop, getrefcount
    [(itop(id_), mp(id_)) for id_, obj in list(id_to_obj.items())
     if src(obj) < 4]
