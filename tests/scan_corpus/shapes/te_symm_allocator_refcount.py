import weakref
from threading import Lock
import torch


class SymmTensor(torch.Tensor):
    @staticmethod
    def __new__(cls, pool, offset, shape, dtype, allocator):
        tensor = pool[offset:].view(dtype=dtype).view(*shape)
        self = torch.Tensor._make_subclass(cls, tensor)
        self._allocator = allocator
        self._ptr = tensor.data_ptr()
        self._offset = offset
        allocator.tensors.add(self)
        allocator.allocated_change(self._ptr, 1)  # corpus: sink
        return self

    def __del__(self):
        # paired release: the tensor's death drops its count on the pointer entry
        if hasattr(self, "_allocator") and hasattr(self, "_ptr"):
            self._allocator.free(self._ptr)


class SymmAllocator:
    def __init__(self, internal_pool):
        self.internal_pool = internal_pool
        self.pool_ptr = self.internal_pool.data_ptr()
        self.allocated = {True: [], False: []}
        self.freelist = {True: [], False: []}
        self.graph_pool_size = 0
        self.tensors = weakref.WeakSet()
        self.lock = Lock()

    def allocated_change(self, ptr: int, change: int):
        offset = ptr - self.pool_ptr
        graph_mode = offset < self.graph_pool_size
        with self.lock:
            for i, (alloc_offset, size, ref_count) in enumerate(self.allocated[graph_mode]):
                if alloc_offset == offset:
                    self.allocated[graph_mode].pop(i)
                    ref_count += change
                    if ref_count == 0:
                        self.freelist[graph_mode].append((offset, size))
                    else:
                        self.allocated[graph_mode].append((offset, size, ref_count))
                    return
        raise ValueError(f"Invalid pointer {ptr} not found in allocated segments")

    def free(self, ptr: int):
        self.allocated_change(ptr, -1)
