# expect: ARH001 L0
_CACHE = {}


def reset():
    global _CACHE
    _CACHE = {}


def attention_mask(lengths, build):
    global _CACHE
    key = (lengths.data_ptr(), lengths.numel())
    if key not in _CACHE:
        _CACHE[key] = build(lengths)
    return _CACHE[key]
