_cache: dict = {}


def install_getter(module, tensor_name, parametrization):
    def get_cached_parametrization():
        global _cache
        key = (id(module), tensor_name)
        tensor = _cache.get(key)  # corpus: sink
        if tensor is None:
            tensor = parametrization()
            _cache[key] = tensor
        return tensor

    return get_cached_parametrization
