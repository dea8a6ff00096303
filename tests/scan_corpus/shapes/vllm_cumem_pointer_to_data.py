import dataclasses
from typing import Optional

HandleType = tuple[int, int, int, int]


@dataclasses.dataclass
class AllocationData:
    handle: HandleType
    tag: str
    cpu_backup_tensor: Optional[object] = None


class CuMemAllocator:
    instance: "CuMemAllocator" = None
    default_tag: str = "default"

    @staticmethod
    def get_instance() -> "CuMemAllocator":
        if CuMemAllocator.instance is None:
            CuMemAllocator.instance = CuMemAllocator()
        return CuMemAllocator.instance

    def __init__(self):
        self.pointer_to_data: dict[int, AllocationData] = {}
        self.current_tag: str = CuMemAllocator.default_tag

    def python_malloc_callback(self, allocation_handle: HandleType) -> None:
        # called by the C allocator right after cuMemCreate/cuMemMap
        py_d_mem = allocation_handle[2]
        self.pointer_to_data[py_d_mem] = AllocationData(  # corpus: sink
            allocation_handle, self.current_tag)
        return

    def python_free_callback(self, ptr: int) -> HandleType:
        # called by the C allocator when the block is released: entry removed
        data = self.pointer_to_data.pop(ptr)
        if data.cpu_backup_tensor is not None:
            data.cpu_backup_tensor = None
        return data.handle
