class Module:
    pass


class DistributedDataParallel(Module):
    def __init__(self, module, shared_param=False):
        self.shared_param = shared_param
        # reference to last iteration's parameters to see if anything has changed
        self.param_refs = []
        self.module = module

    def forward(self, *inputs, **kwargs):
        param_list = [param for param in list(self.module.parameters()) if param.requires_grad]
        if self.shared_param:
            self.param_refs = []
        # identity comparison against the previous iteration's params, which
        # self.param_refs holds strongly, so they cannot be replaced by a new
        # object with the same identity
        self.needs_refresh = True if not self.param_refs else any(
            [param1 is not param2 for param1, param2 in zip(param_list, self.param_refs)]  # corpus: sink
        )
        if self.needs_refresh:
            self.record = []
        self.param_state = [0 for i in range(len(param_list))]
        self.param_refs = param_list
        return self.module(*inputs, **kwargs)
