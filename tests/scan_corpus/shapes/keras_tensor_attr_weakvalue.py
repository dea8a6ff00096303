# keras/src/backend/common/tensor_attributes.py (stored version)
import weakref

_GLOBAL = {}


def get_global_attribute(name):
    return _GLOBAL.get(name)


def set_global_attribute(name, value):
    _GLOBAL[name] = value


def set_tensor_attr(tensor, attr, value):
    try:
        setattr(tensor, attr, value)
    except AttributeError:
        if value is None:
            return
        attr_dict = get_global_attribute(f"{attr}_dict")
        if attr_dict is None:
            attr_dict = weakref.WeakValueDictionary()
            set_global_attribute(f"{attr}_dict", attr_dict)
        attr_dict[id(tensor)] = value  # corpus: sink


def get_tensor_attr(tensor, attr):
    if not hasattr(tensor, attr):
        attr_dict = get_global_attribute(f"{attr}_dict")
        if attr_dict is not None:
            return attr_dict.get(id(tensor), None)
    return getattr(tensor, attr, None)
