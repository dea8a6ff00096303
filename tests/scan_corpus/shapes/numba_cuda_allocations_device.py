from ctypes import byref, c_void_p


def _alloc_finalizer(manager, ptr, alloc_key):
    allocations = manager.allocations

    def core():
        if allocations:
            del allocations[alloc_key]

    return core


class MemoryManager:
    def __init__(self, driver):
        self.driver = driver
        self.allocations = {}

    def memalloc(self, size):
        ptr = c_void_p()
        self.driver.cuMemAlloc(byref(ptr), size)
        alloc_key = ptr.value
        mem = (ptr, size, _alloc_finalizer(self, ptr, alloc_key))
        self.allocations[alloc_key] = mem  # corpus: sink
        return mem
