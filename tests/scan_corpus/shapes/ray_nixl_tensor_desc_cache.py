import threading
from dataclasses import dataclass
from typing import Any, Dict


@dataclass
class TensorDesc:
    reg_desc: Any  # nixlRegDList
    metadata_count: int


class NixlTensorTransport:
    def __init__(self):
        self._nixl_agent = None
        # Mapping from tensor storage data pointer to the NIXL descriptor and reference count.
        self._tensor_desc_cache: Dict[int, TensorDesc] = {}
        self._cache_lock = threading.RLock()

    def get_nixl_agent(self):
        return self._nixl_agent

    def register_nixl_memory(self, tensor) -> None:
        """Registers the tensor's memory with NIXL and bumps the reference count so the memory region is never deregistered."""
        self._add_tensor_descs([tensor])

    def _add_tensor_descs(self, tensors):
        with self._cache_lock:
            for tensor in tensors:
                key = tensor.untyped_storage().data_ptr()
                if key in self._tensor_desc_cache:  # corpus: sink
                    self._tensor_desc_cache[key].metadata_count += 1  # corpus: sink
                else:
                    gpu_id = max(tensor.get_device(), 0)
                    reg_desc = self.get_nixl_agent().register_memory(
                        [(tensor.untyped_storage().data_ptr(), tensor.untyped_storage().nbytes(), gpu_id, "")],
                        mem_type="cuda",
                    )
                    self._tensor_desc_cache[key] = TensorDesc(reg_desc, 1)

    def garbage_collect(self, obj_id, tensors):
        with self._cache_lock:
            for tensor in tensors:
                key = tensor.untyped_storage().data_ptr()
                if key in self._tensor_desc_cache:
                    tensor_desc = self._tensor_desc_cache[key]
                    tensor_desc.metadata_count -= 1
                    if tensor_desc.metadata_count == 0:
                        self._tensor_desc_cache.pop(key)
                        self.get_nixl_agent().deregister_memory(tensor_desc.reg_desc)
