import threading

_CYCLE_PLACEHOLDER = b"CYCLE"

class _Stack(object):
    def __init__(self):
        self._stack = {}

    def push(self, val):
        self._stack[id(val)] = val  # corpus: sink

    def pop(self):
        self._stack.popitem()

    def __contains__(self, val):
        return id(val) in self._stack

class _State:
    # stand-in for panel.io.state.state: one _Stack per thread
    def __init__(self):
        self._stacks = {}

    @property
    def _current_stack(self):
        current_thread = threading.current_thread()
        stack = self._stacks.get(current_thread, None)
        if stack is None:
            stack = _Stack()
            self._stacks[current_thread] = stack
        return stack

state = _State()

def _generate_hash_inner(obj):
    return repr(obj).encode()

def _generate_hash(obj):
    hash_stack = state._current_stack
    if obj in hash_stack:
        return _CYCLE_PLACEHOLDER
    hash_stack.push(obj)
    try:
        hash_value = _generate_hash_inner(obj)
    finally:
        hash_stack.pop()
    return hash_value
