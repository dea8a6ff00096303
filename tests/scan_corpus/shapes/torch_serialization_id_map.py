def persistent_ids(storages):
    ids = {}
    keys = []
    for storage in storages:
        key = ids.setdefault(storage._cdata, str(len(ids)))  # corpus: sink
        keys.append(key)
    return keys
