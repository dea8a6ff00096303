from typing import Any, Set

import torch

from nncf.torch.dynamic_graph.context import forward_nncf_trace
from nncf.torch.nested_objects_traversal import objwalk
from nncf.torch.utils import is_tensor


def replicate_same_tensors(obj: Any) -> Any:
    observed_tensor_object_ids: Set[int] = set()

    def replicate_fn(tensor: torch.Tensor) -> torch.Tensor:
        tensor_object_id = id(tensor)
        if tensor_object_id in observed_tensor_object_ids:
            with forward_nncf_trace():
                return tensor.clone()
        observed_tensor_object_ids.add(tensor_object_id)  # corpus: sink
        return tensor

    obj = objwalk(obj, is_tensor, replicate_fn)
    return obj
