import atexit


class _Bindings:
    def launch_hostfunc(self, stream, hostfunc, *args, **kwargs):
        return id(object())

    def free_hostfunc_user_data(self, handle):
        pass


bindings = _Bindings()

HOSTFUNC_HANDLES = set()


def launch_hostfunc(hostfunc, *args, **kwargs):
    stream = 0
    handle = bindings.launch_hostfunc(stream, hostfunc, *args, **kwargs)
    HOSTFUNC_HANDLES.add(handle)
    return handle


def free_hostfunc_user_data(handle: int):
    if handle not in HOSTFUNC_HANDLES:  # corpus: sink
        raise ValueError(f"Host function handle {handle} not found.")
    bindings.free_hostfunc_user_data(handle)
    HOSTFUNC_HANDLES.remove(handle)


def free_all_hostfunc_user_data():
    for handle in HOSTFUNC_HANDLES:
        bindings.free_hostfunc_user_data(handle)
    HOSTFUNC_HANDLES.clear()


atexit.register(free_all_hostfunc_user_data)
