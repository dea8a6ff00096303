import dataclasses
from typing import Dict, List, Set


def _xla_get_tensor_id(t):
    # XLATensor unique id: a process-wide increasing counter, not an address
    return t._unique_tensor_id


@dataclasses.dataclass
class GraphInputMatcher:

    def __init__(self, tensor_id_to_arg_idx: Dict[int, int],
                 graph_input_tensor_ids: List[int],
                 graph_input_xla_values: List[object],
                 xla_args_tensor_id: Set[int]):
        self.tensor_id_to_arg_idx = tensor_id_to_arg_idx
        self.graph_input_tensor_ids = graph_input_tensor_ids
        self.graph_input_xla_values = [
            None if tensor_id in xla_args_tensor_id else xla_value
            for tensor_id, xla_value in zip(graph_input_tensor_ids, graph_input_xla_values)
        ]
        self.arg_idxs = []
        for tensor_id in self.graph_input_tensor_ids:
            self.arg_idxs.append(self.tensor_id_to_arg_idx.get(tensor_id, None))  # corpus: sink


def extract_graph_helper(xla_args_tensor_only, graph_input_tensor_ids, graph_input_xla_values):
    index_and_tensor_ids = [(index, _xla_get_tensor_id(xla_arg))
                            for index, xla_arg in enumerate(xla_args_tensor_only)]
    xla_args_tensor_ids = set(_xla_get_tensor_id(a) for a in xla_args_tensor_only)
    tensor_id_to_arg_idx = {
        tensor_id: index for index, tensor_id in index_and_tensor_ids
    }
    graph_input_matcher = GraphInputMatcher(tensor_id_to_arg_idx, graph_input_tensor_ids,
                                            graph_input_xla_values, xla_args_tensor_ids)
    return graph_input_matcher
