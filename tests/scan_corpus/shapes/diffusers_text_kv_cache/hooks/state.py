class StateManager:
    def __init__(self, state_cls):
        self._state_cls = state_cls
        self._states = {}
        self._current_context = None

    def set_context(self, name):
        self._current_context = name

    def get_state(self):
        return self._states.setdefault(self._current_context, self._state_cls())
