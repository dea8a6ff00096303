# expect: ARH001 L1
# Weak values: the entry goes when the tensor it holds goes.
import weakref

_by_address = weakref.WeakValueDictionary()


def remember(t):
    _by_address[t.data_ptr()] = t


def lookup(ptr_of):
    return _by_address.get(ptr_of.data_ptr())
