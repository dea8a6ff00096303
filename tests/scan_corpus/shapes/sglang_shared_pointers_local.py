from collections import defaultdict


def load(path):
    return {}


def _shared_pointers(tensors):
    # local grouping while every tensor is held by the `tensors` dict
    ptrs = defaultdict(list)
    for k, v in tensors.items():
        ptrs[v.data_ptr()].append(k)  # corpus: sink
    failing = []
    for _, names in ptrs.items():
        if len(names) > 1:
            failing.append(names)
    return failing


def convert_bin_to_safetensor_file(pt_filename: str, sf_filename: str) -> None:
    loaded = load(pt_filename)
    if "state_dict" in loaded:
        loaded = loaded["state_dict"]
    shared = _shared_pointers(loaded)
    for shared_weights in shared:
        for name in shared_weights[1:]:
            loaded.pop(name)
