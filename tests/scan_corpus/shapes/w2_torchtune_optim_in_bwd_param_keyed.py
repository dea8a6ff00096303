def register_optim_in_bwd_hooks(model, optim_dict) -> None:
    """optim_dict: Dict[torch.nn.Parameter, torch.optim.Optimizer], keyed by the parameter objects."""

    def optim_step(param) -> None:
        optim_dict[param].step()  # corpus: sink
        optim_dict[param].zero_grad()

    for p in model.parameters():
        if p.requires_grad:
            p.register_post_accumulate_grad_hook(optim_step)

