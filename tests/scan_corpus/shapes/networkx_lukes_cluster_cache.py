from functools import lru_cache

CLUSTER_EVAL_CACHE_SIZE = 2048


def lukes_partitioning(G, max_size, node_weight=None, edge_weight=None):
    safe_G = G.copy()

    @lru_cache(CLUSTER_EVAL_CACHE_SIZE)
    def _value_of_cluster(cluster):
        valid_edges = [e for e in safe_G.edges if e[0] in cluster and e[1] in cluster]
        return sum(safe_G.edges[e][edge_weight] for e in valid_edges)

    def _value_of_partition(partition):
        return sum(_value_of_cluster(frozenset(c)) for c in partition)

    @lru_cache(CLUSTER_EVAL_CACHE_SIZE)
    def _weight_of_cluster(cluster):
        return sum(safe_G.nodes[n][node_weight] for n in cluster)

    def _pivot(partition, node):
        ccx = [c for c in partition if node in c]
        return ccx[0]

    def _concatenate_or_merge(partition_1, partition_2, x, i, ref_weigth):
        ccx = _pivot(partition_1, x)
        cci = _pivot(partition_2, i)
        merged_xi = ccx.union(cci)
        if _weight_of_cluster(frozenset(merged_xi)) <= ref_weigth:  # corpus: sink
            option_2 = [merged_xi] + partition_1 + partition_2
            return option_2, _value_of_partition(option_2)
        else:
            option_1 = partition_1 + partition_2
            return option_1, _value_of_partition(option_1)

    partition, _ = _concatenate_or_merge([{0}], [{1}], 0, 1, max_size)
    return partition
