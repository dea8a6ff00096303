def unique(items):
    return {id(x): x for x in items}.values()  # corpus: sink
