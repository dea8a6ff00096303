import ctypes

import torch

DEVICE_COUNT = torch.cuda.device_count()

global CUDA_STREAMS
global WEIGHT_BUFFERS
global ABSMAX_BUFFERS

if DEVICE_COUNT > 0:
    _CUDA_STREAMS = {
        (index := torch.cuda.device(i).idx): ctypes.c_void_p(  # corpus: sink
            torch._C._cuda_getCurrentRawStream(index)
        )
        for i in range(DEVICE_COUNT)
    }
    CUDA_STREAMS = [None] * (max(_CUDA_STREAMS.keys()) + 1)
    WEIGHT_BUFFERS = [None] * (max(_CUDA_STREAMS.keys()) + 1)
    ABSMAX_BUFFERS = [None] * (max(_CUDA_STREAMS.keys()) + 1)
    for k, v in _CUDA_STREAMS.items():
        CUDA_STREAMS[k] = v
    CUDA_STREAMS = tuple(CUDA_STREAMS)
    del _CUDA_STREAMS
else:
    CUDA_STREAMS = ()
    WEIGHT_BUFFERS = []
    ABSMAX_BUFFERS = []


def fast_dequantize(W):
    device_index = W.device.index
    CUDA_STREAM = CUDA_STREAMS[device_index]
    return CUDA_STREAM
