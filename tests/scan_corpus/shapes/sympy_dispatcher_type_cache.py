class Dispatcher:
    __slots__ = '__name__', 'name', 'funcs', 'ordering', '_cache', 'doc'

    def __init__(self, name, doc=None):
        self.name = self.__name__ = name
        self.funcs = {}
        self._cache = {}
        self.ordering = []
        self.doc = doc

    def add(self, signature, func):
        self.funcs[signature] = func
        self._cache.clear()

    def __call__(self, *args, **kwargs):
        types = tuple([type(arg) for arg in args])
        try:
            func = self._cache[types]
        except KeyError:
            func = self.dispatch(*types)
            if not func:
                raise NotImplementedError('Could not find signature')
            self._cache[types] = func  # corpus: sink
        return func(*args, **kwargs)

    def dispatch(self, *types):
        return self.funcs.get(types)
