import gc


def create_graph(objects):
    id_to_node = {id(obj): i for i, obj in enumerate(objects)}
    edges = []
    for obj in objects:
        src = id_to_node[id(obj)]
        for referent in gc.get_referents(obj):
            dst = id_to_node.get(id(referent))  # corpus: sink
            if dst is not None:
                edges.append((src, dst))
    return edges
