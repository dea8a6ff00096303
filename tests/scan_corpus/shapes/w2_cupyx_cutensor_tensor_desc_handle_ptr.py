# module globals, never evicted
_handles = {}
_tensor_descriptors = {}


class Handle:
    def __init__(self):
        self.ptr = id(self)  # address of the native cuTENSOR handle


class TensorDescriptor:
    pass


def get_device_id():
    return 0


def _get_handle():
    dev = get_device_id()
    if dev not in _handles:
        handle = Handle()
        _handles[dev] = handle  # the handle is kept for the whole process
        return handle
    return _handles[dev]


def create_tensor_descriptor(a, uop=0, handle=None):
    if handle is None:
        handle = _get_handle()
    key = (handle.ptr, a.dtype, tuple(a.shape), tuple(a.strides), uop)
    if key in _tensor_descriptors:
        desc = _tensor_descriptors[key]
        return desc
    desc = TensorDescriptor()
    _tensor_descriptors[key] = desc  # corpus: sink
    return desc
