from collections import defaultdict
from itertools import chain

from torch.overrides import TorchFunctionMode

from nncf.torch.function_hook.weak_map import WeakUnhashableKeyMap


class FunctionHookMode(TorchFunctionMode):
    def __init__(self, model, hook_storage) -> None:
        super().__init__()
        self.hook_storage = hook_storage
        self.model = model
        self.in_process_const = False
        self.const_name_map = WeakUnhashableKeyMap()
        for name, parameter in chain(self.model.named_parameters(), self.model.named_buffers()):
            self.const_name_map[parameter] = name

        counter_shared_weights = defaultdict(int)
        for name, parameter in chain(self.model.named_parameters(remove_duplicate=False)):
            counter_shared_weights[id(parameter)] += 1

        self.counter_reusing_shared_weights = {k: v - 1 for k, v in counter_shared_weights.items() if v > 1}
        self.cache_parameters = {}

    def execute_hooks_for_parameter(self, value):
        id_param = id(value)
        if id_param in self.cache_parameters:
            ret = self.cache_parameters[id_param]
            self.counter_reusing_shared_weights[id_param] -= 1
            if self.counter_reusing_shared_weights[id_param] == 0:
                del self.cache_parameters[id_param]
                del self.counter_reusing_shared_weights[id_param]
            return ret

        ret_value = value
        name_in_model = self.const_name_map.get(value, None)
        if name_in_model is not None and not self.in_process_const:
            self.in_process_const = True
            ret_value = self.hook_storage.execute_post_function_hooks(name_in_model, 0, value)
            self.in_process_const = False

            if self.counter_reusing_shared_weights.get(id_param):
                if ret_value is value:
                    del self.counter_reusing_shared_weights[id_param]
                else:
                    self.cache_parameters[id_param] = ret_value  # corpus: sink

        return ret_value
