from collections import defaultdict


class BaseModule(object):
    def init_weights(self):
        is_top_level_module = False
        if not hasattr(self, '_params_init_info'):
            # the key should be the obj:`nn.Parameter` of model
            # this attribute would be deleted after all parameters is initialized.
            self._params_init_info = defaultdict(dict)
            is_top_level_module = True

            for name, param in self.named_parameters():
                self._params_init_info[param]['init_info'] = 'unchanged'  # corpus: sink
                self._params_init_info[param]['tmp_mean_value'] = param.data.mean().cpu()

            for sub_module in self.modules():
                sub_module._params_init_info = self._params_init_info

        for m in self.children():
            if hasattr(m, 'init_weights'):
                m.init_weights()

        if is_top_level_module:
            self._dump_init_info()

            for sub_module in self.modules():
                del sub_module._params_init_info

    def _dump_init_info(self):
        for name, param in self.named_parameters():
            print(name, self._params_init_info[param]['init_info'])
