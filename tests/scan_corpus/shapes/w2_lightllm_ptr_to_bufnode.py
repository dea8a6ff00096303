import collections
import dataclasses
from dataclasses import field
from typing import Dict, List, Set, Tuple


class UntypedStorage:
    @staticmethod
    def _free_weak_ref(ptr):
        pass


@dataclasses.dataclass
class BufNode:
    inner_tensor: object
    shape_key: Tuple
    storage_weak_ptr: int
    shape_to_tensor: Dict = field(default_factory=dict)

    def __del__(self):
        UntypedStorage._free_weak_ref(self.storage_weak_ptr)


class CacheTensorManager:
    def __init__(self):
        self.ptr_to_bufnode: Dict[int, BufNode] = {}
        self.free_shape_dtype_to_bufs: Dict[Tuple, List[BufNode]] = collections.defaultdict(list)
        self.changed_ptr: Set[int] = set()

    def cache_env_out(self):
        self.ptr_to_bufnode.clear()
        self.free_shape_dtype_to_bufs.clear()
        self.changed_ptr.clear()

    def alloc_tensor(self, size, data_type, empty):
        key = (size, data_type)
        buf_tensor = empty((size,), data_type)
        storage_weak_ptr = buf_tensor.untyped_storage()._weak_ref()
        buf_node = BufNode(buf_tensor, key, storage_weak_ptr)
        self.ptr_to_bufnode[storage_weak_ptr] = buf_node  # corpus: sink
        ans = buf_node.inner_tensor.data
        ans.storage_weak_ptr = buf_node.storage_weak_ptr
        return ans


g_cache_manager = CacheTensorManager()
