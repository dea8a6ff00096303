_unwrap_cache = {}


def unwrap(block_spec):
    if block_spec.index_map is None:
        return block_spec
    if id(block_spec) in _unwrap_cache:
        return _unwrap_cache[id(block_spec)]

    def new_index_map(*args):
        return block_spec.index_map(*args)

    out = block_spec.replace(index_map=new_index_map)
    _unwrap_cache[id(block_spec)] = out  # corpus: sink
    return out
