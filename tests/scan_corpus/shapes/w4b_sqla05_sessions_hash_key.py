import weakref


class Session(object):
    def __init__(self, bind=None):
        self.bind = bind
        self.transaction = None
        self.hash_key = id(self)
        _sessions[self.hash_key] = self  # corpus: sink

    def _attach(self, state):
        if state.session_id and state.session_id is not self.hash_key:
            raise ValueError(
                "Object '%s' is already attached to session '%s' "
                "(this is '%s')" % (state, state.session_id, self.hash_key))
        if state.session_id != self.hash_key:
            # the id() key is copied onto the object's state, which can outlive the Session
            state.session_id = self.hash_key


_sessions = weakref.WeakValueDictionary()


def object_session(instance_state):
    return _state_session(instance_state)


def _state_session(state):
    if state.session_id:
        try:
            return _sessions[state.session_id]
        except KeyError:
            pass
    return None
