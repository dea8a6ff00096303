def _safe_getattr(obj, attr, default=None):
    try:
        return getattr(obj, attr, default)
    except Exception:
        return default


def _repr_pprint(obj, p, cycle):
    p.text(repr(obj))


def _default_pprint(obj, p, cycle):
    klass = _safe_getattr(obj, '__class__', None) or type(obj)
    if _safe_getattr(klass, '__repr__', None) is not object.__repr__:
        _repr_pprint(obj, p, cycle)
        return
    p.begin_group(1, '<')
    p.pretty(klass)
    p.text(' at 0x%x' % id(obj))  # corpus: sink
    if cycle:
        p.text(' ...')
    p.end_group(1, '>')
