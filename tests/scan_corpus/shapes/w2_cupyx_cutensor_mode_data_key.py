import numpy as _numpy
_tensor_descriptors = {}
_contraction_descriptors = {}
_modes = {}


class Mode:
    def __init__(self, mode):
        self._array = _numpy.array(mode, dtype=_numpy.int32)
        self.ndim = self._array.size
        self.data = self._array.ctypes.data  # address of the mode array


def create_mode(*mode):
    integer_mode = [x if isinstance(x, int) else ord(x) for x in mode]
    return _create_mode_with_cache(tuple(integer_mode))


def _create_mode_with_cache(axis_or_ndim):
    if axis_or_ndim in _modes:
        return _modes[axis_or_ndim]
    mode = Mode(axis_or_ndim)
    _modes[axis_or_ndim] = mode  # every Mode made here is kept forever
    return mode


def _auto_create_mode(array, mode):
    if not isinstance(mode, Mode):
        mode = create_mode(*mode)
    return mode

def create_tensor_descriptor(a, handle, make_desc):
    key = (handle.ptr, a.dtype, tuple(a.shape), tuple(a.strides))
    if key not in _tensor_descriptors:
        _tensor_descriptors[key] = make_desc(a)  # descriptor (with .ptr) kept forever
    return _tensor_descriptors[key]


def _create_contraction_descriptor(handle, desc_A, mode_A, desc_B, mode_B, make):
    key = (handle.ptr, desc_A.ptr, mode_A.data, desc_B.ptr, mode_B.data)  # ptrs kept alive internally
    if key in _contraction_descriptors:
        return _contraction_descriptors[key]
    desc = make(desc_A, mode_A, desc_B, mode_B)
    _contraction_descriptors[key] = desc  # corpus: sink
    return desc


def contraction(handle, A, desc_A, mode_A, B, desc_B, mode_B, make):
    return _create_contraction_descriptor(handle, desc_A, _auto_create_mode(A, mode_A),
                                          desc_B, _auto_create_mode(B, mode_B), make)
