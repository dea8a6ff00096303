from collections.abc import Mapping, Sequence


class Tensor:
    def data_ptr(self):
        return 0

    def numel(self):
        return 0

    def element_size(self):
        return 4


def get_data_size(data):
    data_ptrs = set()

    def _get_size(obj):
        if isinstance(obj, Tensor):
            if obj.data_ptr() in data_ptrs:
                return 0
            data_ptrs.add(obj.data_ptr())  # corpus: sink
            return obj.numel() * obj.element_size()
        elif isinstance(obj, Sequence) and not isinstance(obj, str):
            return sum([_get_size(x) for x in obj])
        elif isinstance(obj, Mapping):
            return sum([_get_size(x) for x in obj.values()])
        else:
            return 0

    return sum([_get_size(store) for store in data.stores])
