import weakref


class _IdentityHash(object):
  __slots__ = ('obj',)

  def __init__(self, obj):
    self.obj = obj

  def __hash__(self):
    return id(self.obj)


def hash_structure(obj):
  if isinstance(obj, (HashableWeakRef, WeakStructRef)):
    return hash(obj)
  return hash(_IdentityHash(obj))


class HashableWeakRef(weakref.ref):
  __slots__ = ('_hash',)

  def __init__(self, referrent, callback=None):
    super(HashableWeakRef, self).__init__(referrent, callback)
    self._hash = hash_structure(referrent)

  def __hash__(self):
    return self._hash

  def __eq__(self, other):
    return (hash(self) == hash(other)) and (self() is other())


class WeakStructRef(object):
  def __init__(self, struct, callback=None):
    self._struct = HashableWeakRef(struct, self._cleanup)
    self._hash = hash_structure(self._struct)
    self._callback = callback
    self._alive = True

  def cancel(self):
    self._callback = None

  def _cleanup(self, _):
    if self._alive:
      if self._callback:
        self._callback(self)
        self._callback = None
      self._alive = False

  def __hash__(self):
    return self._hash

  def __eq__(self, other):
    return self._alive == other._alive and self._struct == other._struct


class CachedDirectedFunction(object):
  def __init__(self, func, input_cache=None):
    self._func = func
    self._input_cache = input_cache

  def _get_or_create_edge(self, input, kwargs):
    test_ref = WeakStructRef(input, self._cleanup_input)
    default = (test_ref, None, {})
    cached = self._input_cache.setdefault(test_ref, default)  # corpus: sink
    if cached is not default:
      test_ref.cancel()
    return cached

  def _cleanup_input(self, input_ref):
    del self._input_cache[input_ref]
