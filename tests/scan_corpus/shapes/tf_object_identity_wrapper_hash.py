# tensorflow/python/util/object_identity.py (stored version)
import weakref


class _ObjectIdentityWrapper(object):

  def __init__(self, wrapped):
    self._wrapped = wrapped

  def __eq__(self, other):
    if isinstance(other, _ObjectIdentityWrapper):
      return self._wrapped is other._wrapped
    return False

  def __hash__(self):
    # we rely on id(weakref.ref(a)) == id(weakref.ref(a)) in the weak wrapper.
    return id(self._wrapped)  # corpus: sink


class _WeakObjectIdentityWrapper(_ObjectIdentityWrapper):

  def __init__(self, wrapped):
    super(_WeakObjectIdentityWrapper, self).__init__(weakref.ref(wrapped))


class ObjectIdentityDictionary(object):

  def __init__(self):
    self._storage = {}

  def _wrap_key(self, key):
    return _ObjectIdentityWrapper(key)

  def __getitem__(self, key):
    return self._storage[self._wrap_key(key)]

  def __setitem__(self, key, value):
    self._storage[self._wrap_key(key)] = value


class ObjectIdentityWeakKeyDictionary(ObjectIdentityDictionary):

  def _wrap_key(self, key):
    return _WeakObjectIdentityWrapper(key)
