def _get_cpu_adam():
    from deepspeed.ops.op_builder import CPUAdamBuilder
    return CPUAdamBuilder().load()


class CPUAdam(object):

    optimizer_id = 0

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0):
        self.opt_id = CPUAdam.optimizer_id
        CPUAdam.optimizer_id = CPUAdam.optimizer_id + 1

        self.ds_opt_adam = _get_cpu_adam()
        adamw_mode = True
        self.ds_opt_adam.create_adam(  # corpus: sink
            self.opt_id, lr, betas[0], betas[1], eps, weight_decay, adamw_mode
        )

    def step(self, group, p, state, exp_avg, exp_avg_sq):
        self.ds_opt_adam.adam_update(
            self.opt_id, state["step"], group["lr"], p.data, p.grad.data, exp_avg, exp_avg_sq,
        )
