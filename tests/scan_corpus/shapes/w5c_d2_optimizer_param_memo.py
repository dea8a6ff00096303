import copy
from typing import Any, Dict, List, Set

import torch


def get_default_optimizer_params(model: torch.nn.Module, base_lr=None, overrides=None) -> List[Dict[str, Any]]:
    if overrides is None:
        overrides = {}
    defaults = {}
    if base_lr is not None:
        defaults["lr"] = base_lr
    params: List[Dict[str, Any]] = []
    memo: Set[torch.nn.parameter.Parameter] = set()
    for module in model.modules():
        for module_param_name, value in module.named_parameters(recurse=False):
            if not value.requires_grad:
                continue
            # Avoid duplicating parameters
            if value in memo:  # corpus: sink
                continue
            memo.add(value)

            hyperparams = copy.copy(defaults)
            hyperparams.update(overrides.get(module_param_name, {}))
            params.append({"params": [value], **hyperparams})
    return params
