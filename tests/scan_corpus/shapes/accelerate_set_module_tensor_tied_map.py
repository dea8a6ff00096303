def set_module_tensor_to_device(module, tensor_name, device, value=None, tied_params_map=None):
    old_value = getattr(module, tensor_name)
    if (tied_params_map is not None and value is not None and value.data_ptr() in tied_params_map
            and device in tied_params_map[value.data_ptr()]):
        setattr(module, tensor_name, tied_params_map[value.data_ptr()][device])
        return
    new_value = (value if value is not None else old_value).to(device)
    setattr(module, tensor_name, new_value)
    if (tied_params_map is not None and old_value.data_ptr() in tied_params_map
            and device not in tied_params_map[old_value.data_ptr()]):
        tied_params_map[old_value.data_ptr()][device] = new_value  # corpus: sink
