import ctypes
from ctypes import addressof


def launch(driver, func, args):
    param_ptrs = [addressof(arg) for arg in args]  # corpus: sink
    params = (ctypes.c_void_p * len(param_ptrs))(*param_ptrs)
    driver.cuLaunchKernel(func, params)
