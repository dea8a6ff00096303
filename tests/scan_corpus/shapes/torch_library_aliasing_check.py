def check_no_alias(prev, result):
    storages = {t.untyped_storage()._cdata for t in prev}
    for t in result:
        if t.untyped_storage()._cdata in storages:  # corpus: sink
            raise RuntimeError("output aliases an input")
