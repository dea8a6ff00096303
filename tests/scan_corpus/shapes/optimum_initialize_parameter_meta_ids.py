# optimum/fx/parallelization/utils.py: local set of id(param) to detect tied parameters


def initialize_parameter_meta(model) -> None:
    parameter_ids = set()
    for name, tensor in model.named_parameters(remove_duplicate=False):
        key = id(tensor)
        if key not in parameter_ids:  # corpus: sink
            setattr(
                tensor,
                "meta",
                ParameterMeta(dim=0, mapping={HashableSlice(None, None, None): ParameterSlice(source=name)}),
            )
            parameter_ids.add(key)  # corpus: sink
        else:
            tensor.meta.is_tied = True
