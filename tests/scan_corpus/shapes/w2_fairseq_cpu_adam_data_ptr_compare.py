class CPUAdam(object):
    def step(self, closure=None):
        for group_id, group in enumerate(self.param_groups):
            for param_id, p in enumerate(group["params"]):
                if p.grad is None:
                    continue
                state = self.state[p]
                exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]

                p_data_bak = p.data  # backup of the original data pointer

                p.data = p.data.to(dtype="float32", device="cpu")
                p.grad.data = p.grad.data.to(dtype="float32", device="cpu")

                self.ds_opt_adam.adam_update(
                    self.opt_id, state["step"], group["lr"], p.data, p.grad.data, exp_avg, exp_avg_sq,
                )

                if p_data_bak.data_ptr() != p.data.data_ptr():  # corpus: sink
                    p_data_bak.copy_(p.data)
                    p.data = p_data_bak
