def make_attribute(name, g):
    return (name, g)


def replace_initializer_by_constant_of_shape(onx, threshold=128, ir_version=None):
    new_nodes = []
    for node in onx.node:
        modified = False
        atts = []
        for att in node.attribute:
            if hasattr(att, "g") and att.g is not None:
                g = replace_initializer_by_constant_of_shape(
                    att.g,
                    threshold=threshold,
                    ir_version=ir_version,
                )
                if id(g) != id(att.g):  # corpus: sink
                    modified = True
                    att = make_attribute(att.name, g)
            atts.append(att)
        if modified:
            new_nodes.append((node.op_type, atts))
        else:
            new_nodes.append(node)
    return onx
