class InstrumentedAttribute(object):
    def __init__(self, manager, key, uselist, callable_):
        self.manager = manager
        self.key = key
        self.uselist = uselist
        self.callable_ = callable_

    def initialize(self, obj):
        obj.__dict__[self.key] = None

    def set_callable(self, obj, callable_):
        if callable_ is None:
            self.initialize(obj)
        else:
            # the key tuple holds the attribute object itself, not its id()
            obj._state[('callable', self)] = callable_  # corpus: sink

    def reset(self, obj):
        try:
            del obj._state[('callable', self)]
        except KeyError:
            pass

    def _get_callable(self, obj):
        if ('callable', self) in obj._state:
            return obj._state[('callable', self)]
        elif self.callable_ is not None:
            return self.callable_(obj)
        else:
            return None
