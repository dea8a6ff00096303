from ctypes import byref, c_void_p


class MemoryManager:
    def __init__(self, driver):
        self.driver = driver
        self.allocations = {}

    def memhostalloc(self, size, mapped=False):
        pointer = c_void_p()

        def allocator():
            self.driver.cuMemHostAlloc(byref(pointer), size, 0)

        allocator()
        alloc_key = pointer.value
        if mapped:
            mem = ("mapped", pointer, size)
            self.allocations[alloc_key] = mem  # corpus: sink
            return mem
        return ("pinned", pointer, size)
