# peft/utils/other.py (copy of transformers.pytorch_utils.id_tensor_storage)


def storage_ptr(tensor):
    return tensor.untyped_storage().data_ptr()


def storage_size(tensor):
    return tensor.untyped_storage().nbytes()


def id_tensor_storage(tensor):
    unique_id = storage_ptr(tensor)
    return tensor.device, unique_id, storage_size(tensor)
