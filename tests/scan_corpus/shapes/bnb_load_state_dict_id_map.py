# bitsandbytes/optim/optimizer.py: Optimizer8bit.load_state_dict, local id_map keyed by saved param index
from collections import defaultdict
from copy import deepcopy
from itertools import chain


class Optimizer8bit:
    def load_state_dict(self, state_dict):
        state_dict = deepcopy(state_dict)
        groups = self.param_groups
        saved_groups = state_dict["param_groups"]
        id_map = {
            old_id: p
            for old_id, p in zip(
                chain.from_iterable(g["params"] for g in saved_groups),
                chain.from_iterable(g["params"] for g in groups),
            )
        }

        def cast(param, value):
            return value

        state = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:  # corpus: sink
                param = id_map[k]
                state[param] = cast(param, v)
            else:
                state[k] = v
        self.__setstate__({"state": state, "param_groups": groups})
