from . import trace_rules


def disallow_in_graph(fn):
    trace_rules._allowed_callable_ids.remove(id(fn))
    trace_rules._disallowed_callable_ids.add(id(fn))  # corpus: sink
    return fn
