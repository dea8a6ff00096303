"""A tied model's checkpoint loaded twenty times with accelerate's set_module_tensor_to_device
and the tied_params_map dispatch_model builds (repro.recipes.accelerate_workflows), each load
compared with the same load with no map; ``fix`` patches in the recipe's fix first."""
import sys

import torch

from repro.recipes import accelerate_workflows as recipes

if "fix" in sys.argv:
    recipes.pin_tied_sources()
wrong = sum(not torch.equal(recipes.tied_checkpoint_loads("load", seed),
                            recipes.tied_checkpoint_loads("load", seed, reset=True)) for seed in range(20))
print(f"{wrong} of 20 loads wrong")
