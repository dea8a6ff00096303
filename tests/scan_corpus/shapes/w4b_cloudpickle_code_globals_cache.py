import types
import weakref

_extract_code_globals_cache = weakref.WeakKeyDictionary()


def _walk_global_ops(code):
    return iter(code.co_names)


def _extract_code_globals(co):
    """Find all globals names read or written to by codeblock co."""
    out_names = _extract_code_globals_cache.get(co)
    if out_names is None:
        out_names = {name: None for name in _walk_global_ops(co)}
        if co.co_consts:
            for const in co.co_consts:
                if isinstance(const, types.CodeType):
                    out_names.update(_extract_code_globals(const))
        _extract_code_globals_cache[co] = out_names  # corpus: sink
    return out_names
