def series_to_arrays(data, columns):
    indexer_cache = {}
    out = []
    for s in data:
        index = s.index
        if id(index) in indexer_cache:
            indexer = indexer_cache[id(index)]  # corpus: sink
        else:
            indexer = indexer_cache[id(index)] = index.get_indexer(columns)
        out.append(s.values.take(indexer))
    return out
