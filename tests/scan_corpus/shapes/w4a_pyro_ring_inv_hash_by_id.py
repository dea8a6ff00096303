class Ring(object):
    def __init__(self, cache=None):
        self._cache = {} if cache is None else cache

    def _hash_by_id(self, tensor):
        # saves the tensor so that this id can be used as a key in the
        # cache without risk of the id being recycled
        result = id(tensor)
        assert self._cache.setdefault(('tensor', result), tensor) is tensor
        return result


class LogRing(Ring):
    def __init__(self, cache=None, dim_to_size=None):
        super(LogRing, self).__init__(cache=cache)
        self._dim_to_size = {} if dim_to_size is None else dim_to_size

    def inv(self, term):
        key = 'inv', self._hash_by_id(term)
        if key in self._cache:
            return self._cache[key]

        result = -term
        result._pyro_dims = term._pyro_dims
        self._cache[key] = result  # corpus: sink
        return result
