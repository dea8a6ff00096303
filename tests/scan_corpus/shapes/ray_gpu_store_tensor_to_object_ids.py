import threading
from collections import defaultdict, deque
from dataclasses import dataclass
from typing import Dict, List, Optional, Set


@dataclass
class _GPUObject:
    data: List
    is_primary: bool
    error: Optional[Exception] = None


class GPUObjectStore:
    def __init__(self):
        self._gpu_object_store: Dict[str, deque] = defaultdict(deque)
        # Mapping from tensor data pointer to the IDs of objects that contain it.
        self._tensor_to_object_ids: Dict[int, Set[str]] = defaultdict(set)
        self._lock = threading.RLock()
        self._object_present_cv = threading.Condition(self._lock)

    def has_tensor(self, tensor) -> bool:
        with self._lock:
            return tensor.data_ptr() in self._tensor_to_object_ids

    def add_object(self, obj_id, gpu_object, is_primary):
        with self._object_present_cv:
            if isinstance(gpu_object, Exception):
                self._gpu_object_store[obj_id].append(_GPUObject([], is_primary, error=gpu_object))
            else:
                for tensor in gpu_object:
                    self._tensor_to_object_ids[tensor.data_ptr()].add(obj_id)  # corpus: sink
                self._gpu_object_store[obj_id].append(_GPUObject(gpu_object, is_primary))
            self._object_present_cv.notify_all()

    def pop_object(self, obj_id):
        with self._lock:
            queue = self._gpu_object_store.get(obj_id)
            gpu_object = queue.popleft()
            if len(queue) == 0:
                del self._gpu_object_store[obj_id]
            for tensor in gpu_object.data:
                self._tensor_to_object_ids[tensor.data_ptr()].remove(obj_id)
                if len(self._tensor_to_object_ids[tensor.data_ptr()]) == 0:
                    self._tensor_to_object_ids.pop(tensor.data_ptr())
            return gpu_object.data
