class IdentitySet:
    """A set that considers only object id() for uniqueness."""

    def __init__(self, iterable=None):
        self._members = dict()
        if iterable:
            self.update(iterable)

    def add(self, value):
        self._members[id(value)] = value  # corpus: sink

    def __contains__(self, value):
        return id(value) in self._members

    def remove(self, value):
        del self._members[id(value)]

    def update(self, iterable):
        self._members.update((id(obj), obj) for obj in iterable)

    def __iter__(self):
        return iter(self._members.values())
