class AlignDevicesHook:
    def __init__(self, weights_map, tied_params_names, tied_params_map=None):
        self.weights_map = weights_map
        self.tied_params_names = tied_params_names
        self.tied_params_map = tied_params_map
        self.tied_pointers_to_remove = set()

    def pre_forward(self, module, device, load):
        for name in self.weights_map:
            value = self.weights_map[name]
            if name in self.tied_params_names and value.data_ptr() not in self.tied_params_map:
                self.tied_params_map[value.data_ptr()] = {}  # corpus: sink
            load(module, name, device, tied_params_map=self.tied_params_map)
