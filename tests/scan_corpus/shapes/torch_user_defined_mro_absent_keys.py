class Output:
    def __init__(self):
        self.guarded_mro_absent_keys = set()
        self.mro_source_cache = {}


def guard_absent(tx, mro, idx, name, install_guard):
    for absent_idx in range(1, idx):
        absent_klass = mro[absent_idx]
        cache_key = (id(absent_klass), name)
        if cache_key in tx.output.guarded_mro_absent_keys:  # corpus: sink
            continue
        tx.output.guarded_mro_absent_keys.add(cache_key)
        install_guard(absent_klass, name)
