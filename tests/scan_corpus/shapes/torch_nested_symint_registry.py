from torch.utils.weak import WeakTensorKeyDictionary

_registry = WeakTensorKeyDictionary()
_counter = 0


def nested_int_for(tensor):
    global _counter
    value = _registry.get(tensor)
    if value is None:
        value = _counter
        _counter += 1
        _registry[tensor] = value  # corpus: sink
    return value
