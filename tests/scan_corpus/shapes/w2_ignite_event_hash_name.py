class CallableEventWithFilter:
    def __init__(self, value, event_filter=None, name=None):
        self.filter = event_filter
        if not hasattr(self, "_value_"):
            self._value_ = value
        if not hasattr(self, "_name_") and name is not None:
            self._name_ = name

    def __eq__(self, other):
        if isinstance(other, CallableEventWithFilter):
            return self._name_ == other._name_
        elif isinstance(other, str):
            return self._name_ == other
        else:
            raise NotImplementedError

    def __hash__(self):
        return hash(self._name_)  # corpus: sink
