import collections
import weakref


class PinnedMemoryPointer:
    def __init__(self, mem, offset):
        self.mem = mem
        self.ptr = mem.ptr + offset


class PooledPinnedMemory(object):
    def __init__(self, mem, pool):
        self.ptr = mem.ptr
        self.size = mem.size
        self.pool = pool

    def free(self):
        pool = self.pool()
        if pool and self.ptr != 0:
            pool.free(self.ptr, self.size)
        self.ptr = 0

    __del__ = free


class PinnedMemoryPool:
    def __init__(self, allocator):
        self._in_use = {}
        self._free = collections.defaultdict(list)
        self._alloc = allocator
        self._weakref = weakref.ref(self)

    def malloc(self, size):
        free = self._free[size]
        if free:
            mem = free.pop()
        else:
            mem = self._alloc(size).mem
        self._in_use[mem.ptr] = mem  # corpus: sink
        pmem = PooledPinnedMemory(mem, self._weakref)
        return PinnedMemoryPointer(pmem, 0)

    def free(self, ptr, size):
        mem = self._in_use.pop(ptr, None)
        if mem is None:
            raise RuntimeError('Cannot free out-of-pool memory')
        self._free[size].append(mem)
