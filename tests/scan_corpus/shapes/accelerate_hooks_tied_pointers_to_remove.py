class AlignDevicesHook:
    def __init__(self, tied_params_map):
        self.tied_params_map = tied_params_map
        self.tied_pointers_to_remove = set()

    def pre_forward(self, values, device):
        for value in values:
            if (value is not None and value.data_ptr() in self.tied_params_map
                    and device not in self.tied_params_map[value.data_ptr()]):
                self.tied_pointers_to_remove.add((value.data_ptr(), device))  # corpus: sink

    def post_forward(self):
        for pointer, device in self.tied_pointers_to_remove:
            self.tied_params_map[pointer].pop(device, None)
        self.tied_pointers_to_remove = set()
