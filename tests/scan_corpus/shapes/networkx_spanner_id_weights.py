def spanner(G, stretch, weight=None, seed=None):
    residual_graph = _setup_residual_graph(G, weight)
    H = G.__class__()
    for u, v in residual_graph.edges():
        lightest = min(residual_graph[u][v]["weight"], (0, 0))
        if lightest:
            H.add_edge(u, v)
    return H


def _setup_residual_graph(G, weight):
    residual_graph = G.copy()

    # establish unique edge weights, even for unweighted graphs
    for u, v in G.edges():
        if not weight:
            residual_graph[u][v]["weight"] = (id(u), id(v))  # corpus: sink
        else:
            residual_graph[u][v]["weight"] = (G[u][v][weight], id(u), id(v))

    return residual_graph
