# celery/utils/saferepr.py: reprstream's seen set of id(container) lives for one repr call
from collections import deque, namedtuple
from itertools import chain

_dirty = namedtuple('_dirty', ('objid',))


def _chainlist(it):
    for v in it:
        yield v


def saferepr(o, maxlen=None, maxlevels=3, seen=None):
    stack = deque([iter([o])])
    return ''.join(str(tok) for tok in reprstream(stack, seen=seen, maxlevels=maxlevels))


def reprstream(stack, seen=None, maxlevels=3, level=0):
    seen = seen or set()
    append = stack.append
    popleft = stack.popleft
    is_in_seen = seen.__contains__
    discard_from_seen = seen.discard
    add_to_seen = seen.add
    while stack:
        it = popleft()
        for val in it:
            orig = val
            if isinstance(val, _dirty):
                discard_from_seen(val.objid)
                continue
            if not isinstance(val, list):
                yield repr(val)
                continue
            val = _chainlist(val)
            objid = id(orig)
            if is_in_seen(objid):  # corpus: sink
                yield '<Recursion>'
                continue
            add_to_seen(objid)
            append(chain(['['], val, [_dirty(objid), ']'], it))
            break
