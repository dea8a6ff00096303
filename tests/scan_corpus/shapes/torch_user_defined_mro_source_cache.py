def source_for(tx, klass, name, make_source):
    descriptor = klass.__dict__[name]
    cache_key = (id(descriptor), name)
    cache = tx.output.mro_source_cache
    if cache_key in cache:  # corpus: sink
        return cache[cache_key]
    source = make_source(klass, name)
    cache[cache_key] = source
    return source
