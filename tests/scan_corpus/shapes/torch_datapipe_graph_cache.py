def traverse(datapipe, cache):
    dp_id = id(datapipe)
    if dp_id in cache:  # corpus: sink
        return {}
    cache.add(dp_id)
    graph = {dp_id: (datapipe, {})}
    for child in getattr(datapipe, "sources", []):
        graph[dp_id][1].update(traverse(child, cache.copy()))
    return graph
