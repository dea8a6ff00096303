# expect: ARH001 L0
# The version in the key sees in-place writes, not a freed address handed on.
_results = {}


def checksum(t):
    key = (t.data_ptr(), t._version)
    hit = _results.get(key)
    if hit is None:
        hit = _results[key] = float(t.sum())
    return hit
