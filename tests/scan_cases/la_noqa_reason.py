# expect: none
# A real address-keyed map, suppressed with the reason a reviewer accepted.
_in_flight = {}


def begin(t, handle):
    _in_flight[t.data_ptr()] = handle  # noqa: ARH001 popped in end() while t is still alive


def end(t):
    return _in_flight.pop(t.data_ptr())  # noqa: ARH001 same entry as in begin()
