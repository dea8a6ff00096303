import os
import weakref


def _safe_deregister(storage) -> None:
    """Deregister a cuFile buffer, swallowing errors during teardown."""
    try:
        from torch.cuda.gds import gds_deregister_buffer

        gds_deregister_buffer(storage)
    except Exception:
        pass


def _load_consolidated_gds(filename, device, data_region_size, metadata):
    from torch.cuda.gds import gds_register_buffer, GdsFile
    import torch

    from tensordict._reductions import _rebuild_tensordict_files_consolidated

    data_tensor = torch.empty(data_region_size, dtype=torch.uint8, device=device)
    storage = data_tensor.untyped_storage()
    gds_register_buffer(storage)  # corpus: sink
    try:
        gf = GdsFile(filename, os.O_RDONLY)
        gf.load_storage(storage, offset=0)
        del gf
    except BaseException:
        _safe_deregister(storage)
        raise
    result = _rebuild_tensordict_files_consolidated(metadata, data_tensor)
    # Keep the buffer registered for the lifetime of the TensorDict.
    weakref.finalize(result, _safe_deregister, storage)
    return result

