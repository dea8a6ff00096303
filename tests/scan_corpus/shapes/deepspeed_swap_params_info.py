# deepspeed/runtime/swap_tensor/optimizer_utils.py: swap_params_info keyed by id(parameter), value pins it
import os


class OptimizerStateSwapInfo(object):

    def __init__(self, parameter, numel, base_folder):
        self.tensors = []
        self.param_id = id(parameter)
        self.swap_folder = base_folder
        self.swap_paths = []
        self._add_tensors([parameter])

    def _add_tensors(self, tensor_list):
        for t in tensor_list:
            self.tensors.append(t)
            self.swap_paths.append(os.path.join(self.swap_folder, f'{id(t)}.tensor.swp'))


class OptimizerSwapper(object):

    def __init__(self, base_folder):
        self.swap_params_info = {}
        self.swap_folder = base_folder

    def _swap_out_gradients(self, parameter, gradient_offsets, gradient_tensors, gradient_swapper):
        if not id(parameter) in self.swap_params_info.keys():
            return
        swap_info = self.swap_params_info[id(parameter)]  # corpus: sink
        return swap_info

    def _create_param_swap_info(self, parameter, numel):
        param_id = id(parameter)
        assert not param_id in self.swap_params_info
        self.swap_params_info[param_id] = OptimizerStateSwapInfo(parameter=parameter,  # corpus: sink
                                                                 numel=numel,
                                                                 base_folder=self.swap_folder)
        return self.swap_params_info[param_id]

    def _get_param_swap_info(self, parameter):
        param_id = id(parameter)
        return self.swap_params_info.get(param_id, None)  # corpus: sink
