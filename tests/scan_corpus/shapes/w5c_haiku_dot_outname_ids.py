import collections

Node = collections.namedtuple('Node', 'id,title,outputs')


def tree_leaves(x):
    return list(x) if isinstance(x, (list, tuple)) else [x]


def _graph_to_dot(graph, args, outputs) -> str:
    lines = []
    op_outids = set()
    argids = {id(v) for v in tree_leaves(args)}
    outids = {id(v) for v in tree_leaves(outputs)}
    outname = {id(v): f'output[{i}]' for i, v in enumerate(tree_leaves(outputs))}

    def render_graph(g, parent=None, depth=0):
        for node in g.nodes:
            label = f'<b>{node.title}</b>'
            for o in node.outputs:
                op_outids.add(id(o))

            node_id = id(node.id)
            if node_id in outids:
                label = f'<b>{outname[node_id]}</b><br/>' + label  # corpus: sink
            lines.append(f'{node_id} [label=<{label}>];')

        for s in g.subgraphs:
            render_graph(s, parent=g, depth=depth - 1)

        for a, b in g.edges:
            a, b = map(id, (a, b))
            if a in argids:
                lines.append(f'{a}0 -> {b};')
            else:
                lines.append(f'{a} -> {b};')

    render_graph(graph, parent=None, depth=1)
    return '\n'.join(lines)
