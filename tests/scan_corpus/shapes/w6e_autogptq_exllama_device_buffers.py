def prepare_buffers(device, temp_state, temp_dq):
    # native extension: keeps raw pointers of temp_state / temp_dq per device index
    pass


def zeros(shape, device):
    return bytearray(shape[0] * shape[1] * 2)


def autogptq_post_init(model, max_input_len):
    device_to_buffers_size = {}
    for name, submodule in model.named_modules():
        if getattr(submodule, "QUANT_TYPE", None) == "exllama":
            device = submodule.qweight.device
            if device not in device_to_buffers_size:
                device_to_buffers_size[device] = {"max_dq_buffer_size": 1, "max_inner_outer_dim": 1}

    device_to_buffers = {}
    for device, buffers_size in device_to_buffers_size.items():
        device_to_buffers[device] = {
            "temp_state": zeros((max_input_len, buffers_size["max_inner_outer_dim"]), device=device),
            "temp_dq": zeros((1, buffers_size["max_dq_buffer_size"]), device=device),
        }

    # Buffers need to be persistent to avoid any bug.
    model.device_to_buffers = device_to_buffers

    for device, buffers in model.device_to_buffers.items():
        prepare_buffers(device, buffers["temp_state"], buffers["temp_dq"])  # corpus: sink
    return model
