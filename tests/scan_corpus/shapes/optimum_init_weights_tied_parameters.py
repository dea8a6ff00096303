# optimum/fx/parallelization/passes.py: InitializeOrLoadWeightsPass.run, local dict keyed by id(param)


class InitializeOrLoadWeightsPass:
    need_rerun_when_recompile = False

    def run(self, graph_module, ctx, config):
        new_parameters, tied_parameters = [], {}
        for name, param in sorted(graph_module.named_parameters(remove_duplicate=False)):
            param_meta = getattr(param, "meta")
            if not param_meta.need_initialize:
                continue
            if param_meta.is_tied and id(param) in tied_parameters:  # corpus: sink
                new_parameters.append((name, tied_parameters[id(param)]))
                continue
            new_param = nn.Parameter(torch.zeros(*param.shape, dtype=param.dtype, device=ctx.current_device))
            setattr(new_param, "meta", param_meta)
            new_parameters.append((name, new_param))
            if param_meta.is_tied:
                tied_parameters[id(param)] = new_param
        for name, new_param in new_parameters:
            prefix_and_field = name.rsplit(".", maxsplit=1)
            parent_mod = graph_module.get_submodule(prefix_and_field[0])
            setattr(parent_mod, prefix_and_field[1], new_param)
        return graph_module
