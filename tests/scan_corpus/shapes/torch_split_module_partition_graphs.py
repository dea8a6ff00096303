def split(nodes, node_to_partition, new_graph):
    partition_graphs = {}
    seen = set()
    for node in nodes:
        pid = node_to_partition[node]
        if pid not in seen:
            seen.add(pid)
            partition_graphs[pid] = new_graph()  # corpus: sink
    return partition_graphs
