from typing import Any, Dict, List, Tuple


def try_reuse_input_buffers(args: Tuple[List], kwargs: Dict[str, Any], input_buffers: List) -> Any:
    args = list(args)
    input_args = {}
    for i, arg in enumerate(args):
        input_args[i] = arg
    for k, arg in kwargs.items():
        input_args[k] = arg

    buf_ptr_dict = {buf.data_ptr(): buf for buf in input_buffers}
    keys = list(input_args.keys())
    for key in keys:
        arg = input_args[key]
        if getattr(arg, 'is_cudagraph_output', False):
            input_args.pop(key)
        arg_ptr = arg.data_ptr()
        if arg_ptr in buf_ptr_dict:  # corpus: sink
            buf = buf_ptr_dict[arg_ptr]
            if arg.shape == buf.shape and arg.dtype == buf.dtype and arg.stride() == buf.stride():
                input_args.pop(key)
                buf_ptr_dict.pop(arg_ptr)

    buf_shape_dict = {(buf.shape, buf.stride(), buf.dtype): buf for buf in buf_ptr_dict.values()}
    for key in list(input_args.keys()):
        arg = input_args[key]
        shape_key = (arg.shape, arg.stride(), arg.dtype)
        if shape_key in buf_shape_dict:
            buf = buf_shape_dict[shape_key]
            buf.copy_(arg)
            if isinstance(key, int):
                args[key] = buf
            else:
                kwargs[key] = buf
            buf_shape_dict.pop(shape_key)
            input_args.pop(key)

    for buf in input_args.values():
        input_buffers.append(buf)
    return tuple(args), kwargs
