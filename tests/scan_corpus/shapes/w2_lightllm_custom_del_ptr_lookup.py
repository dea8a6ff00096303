import dataclasses
from dataclasses import field
from typing import Dict, Set, Tuple


class UntypedStorage:
    @staticmethod
    def _free_weak_ref(ptr):
        pass


def custom_del(self):
    global g_cache_manager
    if hasattr(self, "storage_weak_ptr"):
        storage_weak_ptr = self.storage_weak_ptr
    else:
        storage_weak_ptr = self.untyped_storage()._weak_ref()
        UntypedStorage._free_weak_ref(storage_weak_ptr)
    if storage_weak_ptr in g_cache_manager.ptr_to_bufnode:  # corpus: sink
        g_cache_manager.changed_ptr.add(storage_weak_ptr)
    return


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
        self.changed_ptr: Set[int] = set()

    def cache_env_in(self, tensor_cls):
        setattr(tensor_cls, "__del__", custom_del)

    def cache_env_out(self, tensor_cls):
        delattr(tensor_cls, "__del__")
        self.ptr_to_bufnode.clear()
        self.changed_ptr.clear()


g_cache_manager = CacheTensorManager()
