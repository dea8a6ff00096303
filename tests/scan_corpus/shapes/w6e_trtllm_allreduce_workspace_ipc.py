import threading

_thread_local = threading.local()


class IpcMemory:
    def __init__(self, size):
        self.buf = bytearray(size)
        self.peer_ptrs = [id(self.buf)]


class CustomAllReduceHelper:
    @staticmethod
    def allocate_allreduce_fusion_workspace(mapping, size):
        ipc_buffers = [IpcMemory(size)]
        # workspace holds the raw peer pointers of the ipc buffers
        workspace = [p for b in ipc_buffers for p in b.peer_ptrs]
        return ipc_buffers, workspace


def get_allreduce_workspace(mapping):
    if not hasattr(_thread_local, f'allreduce_workspaces_{mapping.pp_rank}'):
        setattr(_thread_local, f'allreduce_workspaces_{mapping.pp_rank}', {})

    allreduce_workspaces = getattr(_thread_local,
                                   f'allreduce_workspaces_{mapping.pp_rank}')
    if mapping not in allreduce_workspaces:
        ipc_buffers, workspace = CustomAllReduceHelper.allocate_allreduce_fusion_workspace(
            mapping, 1 << 20)
        allreduce_workspaces[mapping] = (ipc_buffers, workspace)  # corpus: sink
    return allreduce_workspaces[mapping][1]
