# blinker/_utilities.py: identity key helper and annotated weak references.
from weakref import ref


def hashable_identity(obj):
    if hasattr(obj, "__func__"):
        return (id(obj.__func__), id(obj.__self__))
    elif isinstance(obj, (int, str)):
        return obj
    else:
        return id(obj)


class annotatable_weakref(ref):
    """A weakref.ref that supports custom instance attributes."""


def reference(object, callback=None, **annotations):
    weak = annotatable_weakref(object, callback)
    for key, value in annotations.items():
        setattr(weak, key, value)
    return weak
