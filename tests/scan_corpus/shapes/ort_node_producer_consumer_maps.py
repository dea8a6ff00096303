class NodeProto:
    pass


def _create_producer_consumer_link(node_to_producers, node_to_consumers, producer, consumer):
    if consumer not in node_to_producers:
        node_to_producers[consumer] = set()

    if producer not in node_to_consumers:
        node_to_consumers[producer] = set()

    node_to_producers[consumer].add(producer)  # corpus: sink
    node_to_consumers[producer].add(consumer)


def _map_node_dependencies(graph, node_to_producers, node_to_consumers):
    producers = {}
    for node in graph.node:
        for i in node.input:
            if i in producers:
                producer = producers[i]
                _create_producer_consumer_link(node_to_producers, node_to_consumers, producer, node)
        for o in node.output:
            producers[o] = node
    return set()


def get_producer_consumer_maps(graph):
    # use a hash of the object id for NodeProto.
    NodeProto.__hash__ = lambda self: id(self)

    node_to_producers = {}
    node_to_consumers = {}

    _map_node_dependencies(graph, node_to_producers, node_to_consumers)
    return node_to_producers, node_to_consumers
