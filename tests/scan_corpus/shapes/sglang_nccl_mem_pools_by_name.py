_allocator = None
# MemPool per group, keyed by group_name
_mem_pools = {}


class MemPool:
    def __init__(self, allocator):
        self.allocator = allocator


def _init_allocator():
    global _allocator
    if _allocator is None:
        _allocator = object()


def get_nccl_mem_pool(group_name: str) -> MemPool:
    global _mem_pools
    _init_allocator()
    # keyed by the group's unique_name string, not by id() of the group
    if group_name not in _mem_pools:
        _mem_pools[group_name] = MemPool(_allocator)  # corpus: sink
    return _mem_pools[group_name]


class SymmetricMemoryContext:
    def __init__(self, group_coordinator):
        self.group_coordinator = group_coordinator
        self.group_name = group_coordinator.unique_name
        self._mem_pool = get_nccl_mem_pool(self.group_name)
