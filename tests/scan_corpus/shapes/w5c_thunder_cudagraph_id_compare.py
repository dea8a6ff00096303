import torch


def to_arg_descriptor(*args):
    return tuple((a.dtype, a.size(), a.stride()) if isinstance(a, torch.Tensor) else (type(a), a) for a in args)


class CUDAGraphRunner:
    def __init__(self):
        self.cuda_graph_cache = {}  # cache_key -> (graph, static_inputs, static_outputs)
        self.python_callables = {}  # fn_name -> (callable, static_input_mask)

    def get_static_buffer(self, x):
        if isinstance(x, torch.Tensor):
            return torch.empty_like(x).copy_(x)
        return x

    def build_cuda_graph(self, fn, args, static_args_mask):
        static_inputs = tuple(
            self.get_static_buffer(arg) if not is_static else arg for arg, is_static in zip(args, static_args_mask)
        )
        graph = torch.cuda.CUDAGraph()
        static_outputs = fn(*static_inputs)
        return graph, static_inputs, static_outputs

    def make_cache_key(self, fn_name, *args):
        _, mask = self.python_callables[fn_name]
        return (fn_name, mask, to_arg_descriptor(*args))

    def call_cuda_graph(self, fn_name, *args):
        fn, mask = self.python_callables[fn_name]
        cache_key = self.make_cache_key(fn_name, *args)
        cache_entry = self.cuda_graph_cache.get(cache_key)
        if cache_entry is None:
            cache_entry = self.build_cuda_graph(fn, args, mask)
            self.cuda_graph_cache[cache_key] = cache_entry
        graph, static_inputs, static_outputs = cache_entry
        for static_input, arg in zip(static_inputs, args):
            if id(static_input) != id(arg) and isinstance(static_input, torch.Tensor) and isinstance(arg, torch.Tensor):  # corpus: sink
                static_input.copy_(arg)
        graph.replay()
        return static_outputs
