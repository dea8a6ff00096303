def register_results(blocks):
    registered = {}
    for blk in blocks:
        refs = blk.refs
        ids = registered.get(id(refs))  # corpus: sink
        if ids is None:
            ids = {id(r()) for r in refs.referenced_blocks}
            registered[id(refs)] = ids
        if id(blk) not in ids:
            refs.add_reference(blk)
            ids.add(id(blk))
