# deepspeed/compile/backend.py: module-global dicts keyed by id(gm.graph) of the dynamo graph
from typing import Dict

param_manager: Dict[int, "DSGraphParamManager"] = {}
profiling_results: Dict[int, "ProfilingResult"] = {}


class ProfilingResult:
    param_indices = None
    needs_backward = False


def launch_compile_passes(global_steps: int):
    torch._dynamo.reset()
    profiling_results.clear()
    param_manager.clear()


def make_backend(backend, compile_kwargs={}, free_activation=False, debug_log=False):

    def backend_fn(gm, real_inputs):
        graph_id = id(gm.graph)
        needs_backward = True
        param_indices = [(i, v.ds_id, v.ds_shape) for i, v in enumerate(real_inputs)]

        global profiling_results
        if graph_id not in profiling_results:  # corpus: sink
            profiling_results[graph_id] = ProfilingResult()
            profiling_results[graph_id].param_indices = param_indices
            profiling_results[graph_id].needs_backward = needs_backward

        def make_fw_graph(gm, sample_inputs):
            # inner gm is the AOT forward graph module, not the dynamo graph whose id is the key
            param_manager[graph_id] = DSGraphParamManager(gm.graph, sample_inputs, param_indices)  # corpus: sink
            return gm.graph

        return torch._inductor.compile(gm, real_inputs)

    return backend_fn
