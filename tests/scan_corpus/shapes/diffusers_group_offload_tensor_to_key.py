class ModuleGroup:
    def __init__(self, modules):
        all_tensors = []
        for module in modules:
            all_tensors.extend(module.parameters())
            all_tensors.extend(module.buffers())
        all_tensors = list(dict.fromkeys(all_tensors))
        self.tensor_to_key = {tensor: f"tensor_{i}" for i, tensor in enumerate(all_tensors)}  # corpus: sink
        self.key_to_tensor = {v: k for k, v in self.tensor_to_key.items()}
