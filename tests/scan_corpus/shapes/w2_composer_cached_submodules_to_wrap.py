class CustomPolicy:
    def __init__(self, fn):
        self._fn = fn


class Metric:
    pass


def generate_composer_model_policy(composer_model):
    cached_submodules_to_wrap = {composer_model: False}
    for child in composer_model.children():
        if isinstance(child, Metric):
            for module in child.modules():
                cached_submodules_to_wrap[module] = False
            continue
        cached_submodules_to_wrap[child] = True  # corpus: sink
        fsdp_wrap_fn = getattr(child, 'fsdp_wrap_fn', lambda x: cached_submodules_to_wrap.get(x, False))
        for child_module in child.modules():
            if hasattr(child_module, '_fsdp_wrap'):
                cached_submodules_to_wrap[child_module] = bool(child_module._fsdp_wrap)
            elif child_module is child:
                continue
            else:
                res = fsdp_wrap_fn(child_module)
                cached_submodules_to_wrap[child_module] = res

    def lambda_fn(current_module):
        return cached_submodules_to_wrap.get(current_module, False)

    return CustomPolicy(lambda_fn)
