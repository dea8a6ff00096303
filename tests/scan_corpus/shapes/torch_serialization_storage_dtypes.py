def save_all(storages):
    dtypes = {}
    for storage, dtype in storages:
        if storage.data_ptr() != 0:
            if storage.data_ptr() in dtypes:
                if dtypes[storage.data_ptr()] != dtype:
                    raise RuntimeError("same data saved as two dtypes")
            else:
                dtypes[storage.data_ptr()] = dtype  # corpus: sink
    return dtypes
