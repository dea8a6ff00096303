# expect: none
def dedupe(params):
    unique = []
    ids = set()
    for p in params:
        if id(p) not in ids:
            ids.add(id(p))
            unique.append(p)
    return unique
