class DotNode(object):
    def __init__(self, node, attribute=None, show_name=True):
        self.node = node
        self.id_ = id(node)
        self.attribute = {'label': node.label}
        if attribute is not None:
            self.attribute.update(attribute)


class ComputationalGraph(object):
    def __init__(self, nodes, edges, variable_style=None,
                 function_style=None, rankdir='TB',
                 remove_variable=False, show_name=True):
        self.nodes = nodes
        self.edges = edges
        self.variable_style = variable_style
        self.function_style = function_style
        self.show_name = show_name

    def _to_dot(self):
        ret = 'digraph graphname{'
        drawn_edges = []
        for edge in self.edges:
            head, tail = edge
            head_attr = self.variable_style
            tail_attr = self.function_style
            head_node = DotNode(head, head_attr, self.show_name)
            tail_node = DotNode(tail, tail_attr, self.show_name)
            edge = (head_node.id_, tail_node.id_)
            if edge in drawn_edges:  # corpus: sink
                continue
            ret += "%s -> %s;" % edge
            drawn_edges.append(edge)
        ret += "}"
        return ret
