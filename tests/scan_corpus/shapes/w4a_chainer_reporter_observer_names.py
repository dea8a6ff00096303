_reporters = []


class Reporter(object):

    def __init__(self):
        self._observer_names = {}
        self.observation = {}

    def add_observer(self, name, observer):
        self._observer_names[id(observer)] = name  # corpus: sink

    def add_observers(self, prefix, observers):
        for name, observer in observers:
            self._observer_names[id(observer)] = prefix + name

    def report(self, values, observer=None):
        if observer is not None:
            observer_id = id(observer)
            if observer_id not in self._observer_names:
                raise KeyError(
                    'Given observer is not registered to the reporter.')
            observer_name = self._observer_names[observer_id]
            for key, value in values.items():
                name = '%s/%s' % (observer_name, key)
                self.observation[name] = value
        else:
            self.observation.update(values)
