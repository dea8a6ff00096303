class Wrapper:
    def __init__(self):
        self.user_defined_kernel_cache = {}

    def define_user_kernel(self, kernel, kwargs, meta):
        cache_key = [id(kernel.fn)]
        for arg in kwargs.values():
            cache_key.append(arg)
        cache_key.append(str(meta))
        cache_key = tuple(cache_key)
        if cache_key in self.user_defined_kernel_cache:  # corpus: sink
            return self.user_defined_kernel_cache[cache_key]
        name = f"kernel_{len(self.user_defined_kernel_cache)}"
        self.user_defined_kernel_cache[cache_key] = name
        return name
