import os
from typing import Dict, Optional


class _FusedSequenceParallel:
    def __init__(self, device, group):
        self.my_device = device
        self.world_size = group.size()
        self.group = group  # a non-None entry holds its group


# module global, process lifetime, keyed by id() of the ProcessGroup
CACHE: Dict[int, Optional[_FusedSequenceParallel]] = {}


def _can_ranks_communicate_all_to_all_over_nvlink(group) -> bool:
    return group.size() <= 8


def _lazy_init(device, group) -> Optional[_FusedSequenceParallel]:
    world_size = group.size()
    try:
        obj = CACHE[id(group)]  # corpus: sink
    except KeyError:
        if int(os.environ.get("DISABLE_FUSED_SEQUENCE_PARALLEL", "0")):
            obj = None
        elif world_size == 1:
            obj = None
        elif not _can_ranks_communicate_all_to_all_over_nvlink(group):
            obj = None
        else:
            obj = _FusedSequenceParallel(device, group)
        # a None entry keeps nothing alive: a later group with the same id
        # finds the stale None
        CACHE[id(group)] = obj  # corpus: sink
    return obj
