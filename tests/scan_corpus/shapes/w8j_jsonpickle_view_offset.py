import numpy as np


class NumpyNDArrayHandlerView(object):
    mode = 'warn'

    def __init__(self, context):
        self.context = context

    def flatten(self, obj, data):
        """encode numpy to json"""
        base = obj.base
        if base is None:
            return data
        elif isinstance(base, np.ndarray) and base.data.contiguous:
            # store by reference
            data['base'] = self.context.flatten(base, reset=False)
            data['shape'] = obj.shape

            offset = obj.ctypes.data - base.ctypes.data  # corpus: sink
            if offset:
                data['offset'] = offset

            if not obj.data.c_contiguous:
                data['strides'] = obj.strides
        return data

    def restore(self, data):
        base = self.context.restore(data['base'], reset=False)
        arr = np.ndarray(
            buffer=base.data,
            shape=data.get('shape'),
            offset=data.get('offset', 0),
            strides=data.get('strides', None)
        )
        return arr
