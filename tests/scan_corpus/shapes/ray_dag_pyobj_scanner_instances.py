import io
import pickle
from typing import Any, Dict

# Used in deserialization hooks to reference scanner instances.
_instances: Dict[int, "_PyObjScanner"] = {}


def _get_node(instance_id: int, node_index: int):
    return _instances[instance_id]._replace_index(node_index)


def _get_object(instance_id: int, node_index: int) -> Any:
    return _instances[instance_id]._objects[node_index]


class _PyObjScanner(pickle.Pickler):
    def __init__(self, source_type=object):
        self.source_type = source_type
        self._buf = io.BytesIO()
        self._found = None
        self._objects = []
        self._replace_table = None
        _instances[id(self)] = self  # corpus: sink
        super().__init__(self._buf)

    def reducer_override(self, obj):
        if isinstance(obj, self.source_type):
            index = len(self._found)
            self._found.append(obj)
            return _get_node, (id(self), index)
        else:
            index = len(self._objects)
            self._objects.append(obj)
            return _get_object, (id(self), index)

    def replace_nodes(self, table):
        self._replace_table = table
        self._buf.seek(0)
        return pickle.load(self._buf)

    def _replace_index(self, i: int):
        return self._replace_table[self._found[i]]

    def __del__(self):
        del _instances[id(self)]
