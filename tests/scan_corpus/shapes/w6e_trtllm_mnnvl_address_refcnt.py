import sys


def _reserve(size):
    return 0x7F0000000000 + size


def _free(addr, size):
    pass


class MnnvlMemory:
    current_mem_offset: int = 0
    current_start_address: int = 0
    allocated_map = {}
    address_refcnt = {}

    def __init__(self, mapping, size: int):
        self.mapping = mapping
        self.ptr = type(self).open_mnnvl_memory(self.mapping, size)

    def __del__(self):
        if not sys.is_finalizing():
            if hasattr(self, "ptr"):
                type(self).close_mnnvl_memory(self.ptr)

    @classmethod
    def open_mnnvl_memory(cls, mapping, size: int):
        if cls.current_start_address == 0:
            cls.current_start_address = _reserve(size)
        ptr = cls.current_start_address + cls.current_mem_offset
        cls.allocated_map[ptr] = (mapping, size, cls.current_start_address)
        cls.address_refcnt[cls.current_start_address] = (  # corpus: sink
            cls.address_refcnt.get(cls.current_start_address, 0) + 1
        )
        cls.current_mem_offset += size
        return ptr

    @classmethod
    def close_mnnvl_memory(cls, ptr: int):
        mapping, aligned_size, start_address = cls.allocated_map.pop(ptr)
        cls.address_refcnt[start_address] -= 1
        if cls.address_refcnt[start_address] == 0:
            cls.address_refcnt.pop(start_address)
            _free(start_address, aligned_size)
            if start_address == cls.current_start_address:
                cls.current_start_address = 0
                cls.current_mem_offset = 0
