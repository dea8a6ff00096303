import weakref


class WeakSet(object):
    """A set of objects that doesn't keep its elements alive."""

    def __init__(self):
        # Map id(obj) to obj; the weak value dict drops the entry as soon
        # as obj is collected
        self.data = weakref.WeakValueDictionary()

    def __len__(self):
        return len(self.data)

    def __contains__(self, obj):
        return id(obj) in self.data

    def add(self, obj):
        self.data[id(obj)] = obj  # corpus: sink

    def remove(self, obj):
        del self.data[id(obj)]

    def map(self, f):
        for wr in self.data.valuerefs():
            elt = wr()
            if elt is not None:
                f(elt)
