import hashlib
import os


def compute_group_hash(group_id):
    return hashlib.sha256(group_id.encode("utf-8")).hexdigest()[:16]


class ModuleGroup:
    def __init__(self, tensors, offload_to_disk_path, group_id=None):
        self.tensors = tensors
        self._is_offloaded_to_disk = False
        self.group_id = group_id if group_id is not None else str(id(self))
        short_hash = compute_group_hash(self.group_id)
        self.safetensors_file_path = os.path.join(offload_to_disk_path, f"group_{short_hash}.safetensors")

    def _offload_to_disk(self, save_file):
        if not self._is_offloaded_to_disk and not os.path.exists(self.safetensors_file_path):  # corpus: sink
            save_file(self.tensors, self.safetensors_file_path)
        self._is_offloaded_to_disk = True
