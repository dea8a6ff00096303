# module globals: live for the whole process, never evicted
_handles = {}
_contraction_descriptors = {}
_contraction_finds = {}
_contraction_plans = {}


class _CObj:
    def __init__(self):
        self.ptr = id(self)  # address of the native struct


def get_handle(dev=0):
    # memoized for each device: the handle is never released
    if dev not in _handles:
        _handles[dev] = _CObj()
    return _handles[dev]


def _create_contraction_plan(desc, algo, ws_size):
    # desc comes from _contraction_descriptors, which keeps it forever
    handle = get_handle()
    key = (handle.ptr, algo)
    if key in _contraction_finds:
        find = _contraction_finds[key]
    else:
        find = _CObj()
        _contraction_finds[key] = find  # find is pinned here forever

    key = (handle.ptr, desc.ptr, find.ptr, ws_size)
    if key in _contraction_plans:  # corpus: sink
        plan = _contraction_plans[key]
    else:
        plan = _CObj()
        _contraction_plans[key] = plan  # corpus: sink
    return plan


def contraction(desc_key, algo, ws_size):
    if desc_key in _contraction_descriptors:
        desc = _contraction_descriptors[desc_key]
    else:
        desc = _CObj()
        _contraction_descriptors[desc_key] = desc
    return _create_contraction_plan(desc, algo, ws_size)
