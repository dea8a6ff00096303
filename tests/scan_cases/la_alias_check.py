# expect: none
def shares_memory(a, b) -> bool:
    return a.data_ptr() == b.data_ptr() or a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()


def check_inplace(out, inp):
    if shares_memory(out, inp):
        raise RuntimeError("output aliases input")
