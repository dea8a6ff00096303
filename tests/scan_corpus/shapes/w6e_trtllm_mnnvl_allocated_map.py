import sys


def _reserve(size):
    return 0x7F0000000000 + size


class MnnvlMemory:
    current_mem_offset: int = 0
    current_start_address: int = 0
    allocated_map = {}

    def __init__(self, mapping, size: int):
        self.mapping = mapping
        self.segment_size = size
        self.ptr = type(self).open_mnnvl_memory(self.mapping, size)

    def __del__(self):
        if not sys.is_finalizing():
            if hasattr(self, "ptr"):
                type(self).close_mnnvl_memory(self.ptr)

    @classmethod
    def open_mnnvl_memory(cls, mapping, size: int):
        if cls.current_start_address == 0:
            cls.current_start_address = _reserve(size)
        mem_handles = [object()]
        ptr = cls.current_start_address + cls.current_mem_offset
        cls.allocated_map[ptr] = (mapping, size, mem_handles)  # corpus: sink
        cls.current_mem_offset += size
        return ptr

    @classmethod
    def close_mnnvl_memory(cls, ptr: int):
        mapping, aligned_size, mem_handles = cls.allocated_map.pop(ptr)
        mem_handles.clear()
