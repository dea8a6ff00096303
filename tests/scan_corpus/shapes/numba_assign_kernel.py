from functools import lru_cache


@lru_cache  # corpus: sink
def assign_kernel(ndim):
    return compile_for(ndim)


def compile_for(ndim):
    return ("kernel", ndim)
