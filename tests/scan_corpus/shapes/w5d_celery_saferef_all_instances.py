# celery/utils/dispatch/saferef.py: class-attribute WeakValueDictionary keyed by (id(self), id(func));
# weakref callbacks on both targets delete the key when either dies
import weakref


class BoundMethodWeakref(object):
    _all_instances = weakref.WeakValueDictionary()

    def __new__(cls, target, on_delete=None, *arguments, **named):
        key = cls.calculate_key(target)
        current = cls._all_instances.get(key)
        if current is not None:
            current.deletion_methods.append(on_delete)
            return current
        else:
            base = super(BoundMethodWeakref, cls).__new__(cls)
            cls._all_instances[key] = base  # corpus: sink
            base.__init__(target, on_delete, *arguments, **named)
            return base

    def __init__(self, target, on_delete=None):
        def remove(weak, self=self):
            methods = self.deletion_methods[:]
            del self.deletion_methods[:]
            try:
                del self.__class__._all_instances[self.key]
            except KeyError:
                pass
            for function in methods:
                if callable(function):
                    function(self)

        self.deletion_methods = [on_delete]
        self.key = self.calculate_key(target)
        self.weak_self = weakref.ref(target.__self__, remove)
        self.weak_fun = weakref.ref(target.__func__, remove)

    @classmethod
    def calculate_key(cls, target):
        return id(target.__self__), id(target.__func__)
