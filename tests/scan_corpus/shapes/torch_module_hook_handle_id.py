class RemovableHandle:
    next_id = 0

    def __init__(self, hooks_dict):
        self.hooks_dict = hooks_dict
        self.id = RemovableHandle.next_id
        RemovableHandle.next_id += 1


_global_buffer_hooks = {}


def register_buffer_hook(hook):
    handle = RemovableHandle(_global_buffer_hooks)
    _global_buffer_hooks[handle.id] = hook  # corpus: sink
    return handle
