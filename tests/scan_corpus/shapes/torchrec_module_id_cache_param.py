def collect_optimizers(module, path, module_id_cache=None):
    found = []
    if hasattr(module, "fused_optimizer"):
        if module_id_cache is not None:
            module_id = id(module)
            if module_id in module_id_cache:  # corpus: sink
                return found
            module_id_cache[module_id] = module.fused_optimizer
        found.append((path, module.fused_optimizer))
    for name, child in module.named_children():
        found += collect_optimizers(child, f"{path}.{name}", module_id_cache)
    return found
