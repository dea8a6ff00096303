import weakref

from . import trace_rules


def allow_in_graph(fn):
    fn_id = id(fn)
    trace_rules._disallowed_callable_ids.remove(fn_id)
    trace_rules._allowed_callable_ids.add(fn_id)  # corpus: sink

    def deregister():
        trace_rules._allowed_callable_ids.remove(fn_id)

    weakref.finalize(fn, deregister)
    return fn
